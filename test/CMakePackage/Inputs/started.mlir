// A started all-reduce and its wait, lowered by the consumer's own
// conversion (find-package.test).

// CHECK-LABEL: func.func @started
// CHECK: %[[H:.*]] = call @zero_rt_all_reduce_start(
// CHECK: call @zero_rt_wait(%[[H]]) : (!llvm.ptr) -> ()
// CHECK-NOT: zero.
zero.mesh @dp(shape = [2])
func.func @started(%x: memref<8xf32>) {
  %r = zero.all_reduce_buffer %x, %x on @dp reduce = sum : memref<8xf32>, memref<8xf32> -> !zero.request
  zero.wait %r, %x, %x : memref<8xf32>, memref<8xf32>
  return
}
