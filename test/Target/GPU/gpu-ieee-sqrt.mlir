// RUN: zero-opt %s --pass-pipeline='builtin.module(gpu.module(zero-gpu-ieee-sqrt))' --split-input-file | FileCheck %s

// In a kernel, f32 and f64 square roots call libdevice's correctly rounded
// ones (sqrt.rn), declared once each.
// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.func @__nv_fsqrt_rn(f32) -> f32
// CHECK-DAG: llvm.func @__nv_dsqrt_rn(f64) -> f64
// CHECK: gpu.func @k
// CHECK: llvm.call @__nv_fsqrt_rn(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call @__nv_fsqrt_rn(%{{.*}}) : (f32) -> f32
// CHECK: llvm.call @__nv_dsqrt_rn(%{{.*}}) : (f64) -> f64
// Left alone: a square root allowed to be approximate, and an f16 one.
// CHECK: math.sqrt %{{.*}} fastmath<afn> : f32
// CHECK: math.sqrt %{{.*}} : f16
// A host function's square root is not a kernel's.
// CHECK-LABEL: func.func @host
// CHECK: math.sqrt
gpu.module @kernels {
  gpu.func @k(%a: f32, %b: f32, %c: f64, %h: f16) kernel {
    %0 = math.sqrt %a : f32
    %1 = math.sqrt %b : f32
    %2 = math.sqrt %c : f64
    %3 = math.sqrt %a fastmath<afn> : f32
    %4 = math.sqrt %h : f16
    gpu.return
  }
}
func.func @host(%a: f32) -> f32 {
  %0 = math.sqrt %a : f32
  return %0 : f32
}
