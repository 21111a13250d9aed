// zero-checks-to-runtime: each cf.assert (what generate-runtime-verification
// emits) becomes a call of the runtime's zero_rt_check with the condition as
// i32 and the message as a constant string; a module without one is left
// as it is.
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
