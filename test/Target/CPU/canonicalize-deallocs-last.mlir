// zero-canonicalize-deallocs-last: the canonicalizer's result, reached with
// each bufferization.dealloc canonicalized after the ops around it. Both
// RUN lines check the same output: upstream's canonicalizer gives it too.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-canonicalize-deallocs-last))' | FileCheck %s
// RUN: zero-opt %s --split-input-file --canonicalize | FileCheck %s

// What ownership-based deallocation leaves at a returned argument: an
// scf.if on a known ownership, a dealloc freeing a buffer through its
// metadata, twice, under constant conditions. The if folds to the clone,
// the dealloc frees the allocation once, the metadata and the second
// constant go.
// CHECK-LABEL: func.func @returned
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: memref.copy
// CHECK-NEXT: %[[C:.*]] = bufferization.clone %arg0
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<8xf32>) if (%[[TRUE]]) retain (%[[C]] : memref<8xf32>)
// CHECK-NEXT: return %[[C]]
func.func @returned(%arg0: memref<8xf32>) -> memref<8xf32> {
  %true = arith.constant true
  %true_0 = arith.constant true
  %false = arith.constant false
  %a = memref.alloc() : memref<8xf32>
  memref.copy %arg0, %a : memref<8xf32> to memref<8xf32>
  %base, %offset, %size, %stride = memref.extract_strided_metadata %a : memref<8xf32> -> memref<f32>, index, index, index
  %r = scf.if %false -> (memref<8xf32>) {
    scf.yield %arg0 : memref<8xf32>
  } else {
    %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
    scf.yield %c : memref<8xf32>
  }
  %o:1 = bufferization.dealloc (%base, %base : memref<f32>, memref<f32>) if (%true, %true_0) retain (%r : memref<8xf32>)
  return %r : memref<8xf32>
}

// -----

// A dealloc whose condition is only known at run time, of a buffer that
// may be the retained one, has nothing to simplify: it stays as it is.
// CHECK-LABEL: func.func @unknown
// CHECK: %[[R:.*]] = bufferization.dealloc (%arg0 : memref<8xf32>) if (%arg1) retain (%arg2 : memref<8xf32>)
// CHECK: return %[[R]]
func.func @unknown(%arg0: memref<8xf32>, %arg1: i1, %arg2: memref<8xf32>) -> i1 {
  %o = bufferization.dealloc (%arg0 : memref<8xf32>) if (%arg1) retain (%arg2 : memref<8xf32>)
  return %o : i1
}

// -----

// A function with no dealloc is canonicalized as the canonicalizer does
// it.
// CHECK-LABEL: func.func @no_dealloc
// CHECK-NEXT: %[[C:.*]] = arith.constant 3 : index
// CHECK-NEXT: return %[[C]]
func.func @no_dealloc() -> index {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = arith.addi %c1, %c2 : index
  return %s : index
}
