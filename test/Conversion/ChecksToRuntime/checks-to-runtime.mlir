// zero-checks-to-runtime: each cf.assert (what generate-runtime-verification
// emits) becomes a call of the runtime's zero_rt_check with the condition as
// i32 and the message as a constant string; a check that provably holds is
// dropped; a module without one is left as it is.
// RUN: zero-opt %s --split-input-file --zero-checks-to-runtime | FileCheck %s

// CHECK: memref.global "private" constant @__zero_check_0 : memref<15xi8> = dense<[105, 110, 100, 101, 120, 32, 105, 110, 32, 98, 111, 117, 110, 100, 0]>
// CHECK: func.func private @zero_rt_check(i32, !llvm.ptr)
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: (%[[OK:.*]]: i1)
// CHECK: %[[HOLDS:.*]] = arith.extui %[[OK]] : i1 to i32
// CHECK: %[[MSG:.*]] = llvm.inttoptr
// CHECK: call @zero_rt_check(%[[HOLDS]], %[[MSG]]) : (i32, !llvm.ptr) -> ()
// CHECK-NOT: cf.assert
func.func @guarded(%ok: i1) {
  cf.assert %ok, "index in bound"
  return
}

// -----

// CHECK-LABEL: func.func @unguarded
// CHECK-NOT: zero_rt_check
// CHECK: return
func.func @unguarded(%x: f32) -> f32 {
  return %x : f32
}

// -----

// A check that holds wherever it runs is dropped: the index of a loop that
// counts from 0 while below 4, against a buffer of 4.
// CHECK-LABEL: func.func @loop_within_bounds
// CHECK-NOT: zero_rt_check
// CHECK-NOT: cf.assert
// CHECK: memref.store
func.func @loop_within_bounds(%m: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %ge = arith.cmpi sge, %i, %c0 : index
    %lt = arith.cmpi slt, %i, %c4 : index
    %ok = arith.andi %ge, %lt : i1
    cf.assert %ok, "index in bound"
    memref.store %v, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop that runs past its buffer keeps its check: 0 <= i < 5 does not
// prove i < 4.
// CHECK-LABEL: func.func @loop_past_the_end
// CHECK: scf.for
// CHECK: call @zero_rt_check
func.func @loop_past_the_end(%m: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %ge = arith.cmpi sge, %i, %c0 : index
    %lt = arith.cmpi slt, %i, %c4 : index
    %ok = arith.andi %ge, %lt : i1
    cf.assert %ok, "index in bound"
    memref.store %v, %m[%i] : memref<4xf32>
  }
  return
}

// -----

// An index read from memory, and a loop compared unsigned, prove nothing:
// their checks stay.
// CHECK-LABEL: func.func @unknown_indices
// CHECK-COUNT-2: call @zero_rt_check
// CHECK-NOT: call @zero_rt_check
func.func @unknown_indices(%m: memref<4xf32>, %idx: memref<index>, %v: f32,
                           %n: i32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %i = memref.load %idx[] : memref<index>
  %lt = arith.cmpi slt, %i, %c4 : index
  cf.assert %lt, "index in bound"
  %c0i = arith.constant 0 : i32
  %c1i = arith.constant 1 : i32
  %c4i = arith.constant 4 : i32
  scf.for unsigned %j = %c0i to %n step %c1i : i32 {
    %in = arith.cmpi slt, %j, %c4i : i32
    cf.assert %in, "index in bound"
  }
  return
}

// -----

// scf.if yields what the branch taken yields (here the first: the else
// branch's false would prove nothing); a subview's static layout, read
// through the cast to a dynamic type that generate-runtime-verification
// makes, is a constant.
// CHECK-LABEL: func.func @branch_and_layout
// CHECK-NOT: zero_rt_check
// CHECK: return
func.func @branch_and_layout(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %view = memref.subview %m[4] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %dynamic = memref.cast %view
      : memref<4xf32, strided<[1], offset: 4>>
        to memref<?xf32, strided<[?], offset: ?>>
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %dynamic
      : memref<?xf32, strided<[?], offset: ?>>
        -> memref<f32>, index, index, index
  %nonempty = arith.cmpi sgt, %sizes, %c0 : index
  %fits = scf.if %nonempty -> i1 {
    %end = arith.addi %offset, %sizes : index
    %le = arith.cmpi sle, %end, %c8 : index
    scf.yield %le : i1
  } else {
    %false = arith.constant false
    scf.yield %false : i1
  }
  cf.assert %fits, "subview within its source"
  %after = arith.cmpi sge, %offset, %c4 : index
  cf.assert %after, "offset at 4"
  return
}
