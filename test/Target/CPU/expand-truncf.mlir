// zero-expand-truncf: f64 -> bf16 as f64 -> f32 rounded to odd, then
// f32 -> bf16; every other truncation is left alone.

// RUN: zero-opt %s --split-input-file --zero-expand-truncf | FileCheck %s

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:.*]]: f64)
// CHECK: %[[N:.*]] = arith.truncf %[[X]] : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[N]] : f32 to f64
// CHECK: %[[AWAY:.*]] = arith.cmpf ogt
// CHECK: %[[BITS:.*]] = arith.bitcast %[[N]] : f32 to i32
// CHECK: %[[DOWN:.*]] = arith.subi %[[BITS]]
// CHECK: %[[TZ:.*]] = arith.select %[[AWAY]], %[[DOWN]], %[[BITS]] : i32
// CHECK: %[[INEXACT:.*]] = arith.cmpf une, %[[BACK]], %[[X]] : f64
// CHECK: %[[SET:.*]] = arith.ori %[[TZ]]
// CHECK: %[[ODD:.*]] = arith.select %[[INEXACT]], %[[SET]], %[[TZ]] : i32
// CHECK: %[[F:.*]] = arith.bitcast %[[ODD]] : i32 to f32
// CHECK: %[[B:.*]] = arith.truncf %[[F]] : f32 to bf16
// CHECK: return %[[B]]
func.func @scalar(%x: f64) -> bf16 {
  %b = arith.truncf %x : f64 to bf16
  return %b : bf16
}

// -----

// CHECK-LABEL: func.func @vector
// CHECK: arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
func.func @vector(%x: vector<4xf64>) -> vector<4xbf16> {
  %b = arith.truncf %x : vector<4xf64> to vector<4xbf16>
  return %b : vector<4xbf16>
}

// -----

// Truncations LLVM lowers itself stay as they are.
// CHECK-LABEL: func.func @others
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: arith.truncf %{{.*}} : f64 to f16
// CHECK-NEXT: arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: return
func.func @others(%a: f32, %b: f64) -> (bf16, f16, f32) {
  %0 = arith.truncf %a : f32 to bf16
  %1 = arith.truncf %b : f64 to f16
  %2 = arith.truncf %b : f64 to f32
  return %0, %1, %2 : bf16, f16, f32
}
