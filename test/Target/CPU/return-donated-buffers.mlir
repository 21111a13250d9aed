// zero-return-donated-buffers: the clone that ownership-based deallocation
// makes of a returned argument is dropped when the argument is donated to
// that result; other clones, and donated results written elsewhere, stay.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-return-donated-buffers))' --verify-diagnostics | FileCheck %s

// The clone was among the buffers the function frees (unless retained):
// the argument is not, since the function does not own it.
// CHECK-LABEL: func.func @donated
// CHECK-NOT: bufferization.clone
// CHECK: bufferization.dealloc (%[[TMP:.*]] : memref<8xf32>) if (%{{.*}}) retain (%arg0 : memref<8xf32>)
// CHECK: return %arg0
func.func @donated(%arg0: memref<8xf32> {zero.aliasing_output = 0 : i64}) -> memref<8xf32> {
  %true = arith.constant true
  %tmp = memref.alloc() : memref<8xf32>
  memref.copy %arg0, %tmp : memref<8xf32> to memref<8xf32>
  memref.copy %tmp, %arg0 : memref<8xf32> to memref<8xf32>
  %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
  %o = bufferization.dealloc (%tmp, %c : memref<8xf32>, memref<8xf32>) if (%true, %true) retain (%c : memref<8xf32>)
  return %c : memref<8xf32>
}

// -----

// Two donated arguments freed by one dealloc: both leave its freed buffers
// in one rewrite, and both stay retained.
// CHECK-LABEL: func.func @two_donated
// CHECK-NOT: bufferization.clone
// CHECK: bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}}) retain (%arg0, %arg1 : memref<8xf32>, memref<8xf32>)
// CHECK: return %arg0, %arg1
func.func @two_donated(%arg0: memref<8xf32> {zero.aliasing_output = 0 : i64}, %arg1: memref<8xf32> {zero.aliasing_output = 1 : i64}) -> (memref<8xf32>, memref<8xf32>) {
  %true = arith.constant true
  %tmp = memref.alloc() : memref<8xf32>
  %c0 = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
  %c1 = bufferization.clone %arg1 : memref<8xf32> to memref<8xf32>
  %o:2 = bufferization.dealloc (%tmp, %c0, %c1 : memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%true, %true, %true) retain (%c0, %c1 : memref<8xf32>, memref<8xf32>)
  return %c0, %c1 : memref<8xf32>, memref<8xf32>
}

// -----

// Not donated: the caller owns what it gets, so the clone stays.
// CHECK-LABEL: func.func @not_donated
// CHECK: %[[C:.*]] = bufferization.clone %arg0
// CHECK: return %[[C]]
func.func @not_donated(%arg0: memref<8xf32>) -> memref<8xf32> {
  %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
  return %c : memref<8xf32>
}

// -----

// A donated result in a buffer of its own (the argument was read after the
// update) is left, with a remark.
// CHECK-LABEL: func.func @own_buffer
// CHECK: return %[[A:.*]] : memref<8xf32>
// expected-remark @+1 {{zero-return-donated-buffers: result 0 is written to a buffer of its own, not to argument 0's: the argument's old value is read after the update}}
func.func @own_buffer(%arg0: memref<8xf32> {zero.aliasing_output = 0 : i64}) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %arg0, %a : memref<8xf32> to memref<8xf32>
  return %a : memref<8xf32>
}

// -----

// A mark that names no result of the argument's type is an error.
// expected-error @+1 {{zero.aliasing_output of argument 0 names result 3, which is not a buffer of the argument's type}}
func.func @bad_mark(%arg0: memref<8xf32> {zero.aliasing_output = 3 : i64}) -> memref<8xf32> {
  return %arg0 : memref<8xf32>
}
