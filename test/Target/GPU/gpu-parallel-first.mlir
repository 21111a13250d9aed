// RUN: zero-opt %s --zero-gpu-parallel-first --split-input-file | FileCheck %s
// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(zero-to-nvvm{gpu-format=isa})' | FileCheck %s --check-prefix=KERNEL

// A sum over a batch's rows: the column loop goes outside the row loop, so
// each column is a thread that sums its rows in their order.
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[COLUMN:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @rows
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #[[COLUMN]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%arg0 : memref<512x768xf32>) outs(%arg1 : memref<768xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.reduce
// On the GPU: one kernel, launched once, not a host loop of a kernel per
// row.
// KERNEL-LABEL: llvm.func @rows
// KERNEL-NOT: llvm.cond_br
// KERNEL: gpu.launch_func
// KERNEL-NOT: gpu.launch_func
// KERNEL-NOT: llvm.cond_br
// KERNEL: llvm.return
func.func @rows(%x: memref<512x768xf32>, %sum: memref<768xf32>) {
  linalg.reduce ins(%x : memref<512x768xf32>) outs(%sum : memref<768xf32>) dimensions = [0]
    (%a: f32, %s: f32) {
      %t = arith.addf %a, %s : f32
      linalg.yield %t : f32
    }
  return
}

// -----

// Two reductions around a parallel dimension: the parallel one first, then
// the reductions in their order (the same elements summed in the same
// order as before).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @around
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]}
func.func @around(%z: memref<3x6x7xf32>, %sum: memref<6xf32>) {
  linalg.reduce ins(%z : memref<3x6x7xf32>) outs(%sum : memref<6xf32>) dimensions = [0, 2]
    (%a: f32, %s: f32) {
      %t = arith.addf %a, %s : f32
      linalg.yield %t : f32
    }
  return
}

// -----

// A generic op with its reduction first is interchanged in place.
// CHECK-DAG: #[[T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @generic
// CHECK: linalg.generic {indexing_maps = [#[[T]], #[[O]]], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @generic(%x: memref<4x9xf32>, %m: memref<9xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x9xf32>) outs(%m : memref<9xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.maximumf %a, %s : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Negative: a reduction over the last dimension already has its parallel
// loop outside, and a full reduction has none; both stay as they are, and
// so do ops without reductions.
// CHECK-LABEL: func.func @unchanged
// CHECK: linalg.reduce ins(%arg0 : memref<5x6xf32>) outs(%arg1 : memref<5xf32>) dimensions = [1]
// CHECK: linalg.reduce ins(%arg0 : memref<5x6xf32>) outs(%arg2 : memref<f32>) dimensions = [0, 1]
// CHECK: linalg.transpose
// CHECK-NOT: linalg.generic
func.func @unchanged(%x: memref<5x6xf32>, %rows: memref<5xf32>, %all: memref<f32>, %t: memref<6x5xf32>) {
  linalg.reduce ins(%x : memref<5x6xf32>) outs(%rows : memref<5xf32>) dimensions = [1]
    (%a: f32, %s: f32) {
      %u = arith.addf %a, %s : f32
      linalg.yield %u : f32
    }
  linalg.reduce ins(%x : memref<5x6xf32>) outs(%all : memref<f32>) dimensions = [0, 1]
    (%a: f32, %s: f32) {
      %u = arith.addf %a, %s : f32
      linalg.yield %u : f32
    }
  linalg.transpose ins(%x : memref<5x6xf32>) outs(%t : memref<6x5xf32>) permutation = [1, 0]
  return
}
