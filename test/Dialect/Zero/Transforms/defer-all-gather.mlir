// zero-defer-all-gather runs on what zero-shard-weight-update makes of a
// training loop; the inputs here are the loops as written, sharded first.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather=gather-dtype=bf16 --verify-diagnostics | FileCheck %s --check-prefix=FORCED
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=stage=3 --zero-defer-all-gather | FileCheck %s --check-prefix=STAGE3
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=shard-function-boundary --zero-defer-all-gather=shard-function-boundary 2>/dev/null | FileCheck %s --check-prefix=BOUNDARY
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=shard-function-boundary --zero-defer-all-gather=shard-function-boundary -o /dev/null 2>&1 | FileCheck %s --check-prefix=BREMARK
// RUN: not zero-opt %s --split-input-file --zero-defer-all-gather=gather-dtype=f8 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: for the --gather-dtype option: Cannot find option named 'f8'!

zero.mesh @dp(shape = [4])

// The forward pass reads only the bf16 rounding of the fp32 weight: the loop
// carries the fp32 shard and a bf16 copy, gathered in bf16 at the end of
// each iteration for the next; the first copy is the initial weight rounded
// before the loop, and the last shard is gathered in f32 after it.
// CHECK-LABEL: func.func @bf16_forward
// CHECK-SAME: (%[[W0:[^:]+]]: tensor<10xf32>, %[[X:[^:]+]]: tensor<10xbf16>)
// CHECK: %[[COPY0:.*]] = arith.truncf %[[W0]] : tensor<10xf32> to tensor<10xbf16>
// CHECK: %[[S0:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xf32> -> tensor<3xf32>
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[WS:.*]] = %[[S0]], %[[WB:.*]] = %[[COPY0]]) -> (tensor<3xf32>, tensor<10xbf16>)
// CHECK-NOT: arith.truncf %[[WS]] : tensor<3xf32> to tensor<3xbf16>
// CHECK: arith.mulf %[[WB]], %[[X]] : tensor<10xbf16>
// CHECK: %[[GS:.*]] = zero.reduce_scatter
// CHECK: %[[NEW:.*]] = arith.subf %[[WS]], %{{.*}} : tensor<3xf32>
// CHECK-NOT: zero.all_gather %[[NEW]] on @dp : tensor<3xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[NEW]] : tensor<3xf32> to tensor<3xbf16>
// CHECK: %[[G:.*]] = zero.all_gather %[[T]] on @dp : tensor<3xbf16> -> tensor<12xbf16>
// CHECK: %[[NB:.*]] = tensor.extract_slice %[[G]][0] [10] [1] : tensor<12xbf16> to tensor<10xbf16>
// CHECK: scf.yield %[[NEW]], %[[NB]] : tensor<3xf32>, tensor<10xbf16>
// CHECK: %[[LAST:.*]] = zero.all_gather %[[R]]#0 on @dp : tensor<3xf32> -> tensor<12xf32>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[LAST]][0] [10] [1]
// CHECK: return %[[OUT]]
// With shard-function-boundary the weight enters and leaves as the shard
// itself: the loop starts from the argument, the first copy is the
// argument's rounding gathered in bf16 (the same bits: rounding commutes
// with gathering), and the function returns the last shard, ungathered.
// BOUNDARY-LABEL: func.func @bf16_forward
// BOUNDARY-SAME: (%[[W0:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>}, %[[X:[^:]+]]: tensor<10xbf16>)
// BOUNDARY-SAME: -> (tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>, zero.state_of = 0 : i64})
// BOUNDARY: %[[T:.*]] = arith.truncf %[[W0]] : tensor<3xf32> to tensor<3xbf16>
// BOUNDARY: %[[G:.*]] = zero.all_gather %[[T]] on @dp : tensor<3xbf16> -> tensor<12xbf16>
// BOUNDARY: %[[COPY0:.*]] = tensor.extract_slice %[[G]][0] [10] [1] : tensor<12xbf16> to tensor<10xbf16>
// BOUNDARY: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[W0]], %{{.*}} = %[[COPY0]]) -> (tensor<3xf32>, tensor<10xbf16>)
// BOUNDARY: scf.yield
// BOUNDARY-NOT: zero.all_gather
// BOUNDARY: return %[[R]]#0 : tensor<3xf32>
// STAGE3-LABEL: func.func @bf16_forward
// STAGE3: scf.for {{.*}} -> (tensor<3xf32>)
// STAGE3: zero.all_gather %{{.*}} {zero.for_use
func.func @bf16_forward(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
    %yb = arith.mulf %wb, %x : tensor<10xbf16>
    %gl = arith.extf %yb : tensor<10xbf16> to tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The forward pass reads the fp32 weight itself: the copy is gathered in f32
// (auto), or, with gather-dtype=bf16, in bf16 and extended back, which
// changes results and says so.
// CHECK-LABEL: func.func @f32_forward
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (tensor<3xf32>, tensor<2x5xf32>)
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<3xf32> -> tensor<12xf32>
// CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<3xf32>, tensor<2x5xf32>
// The last copy is already whole and in full precision: no second gather.
// CHECK-NOT: zero.all_gather
// CHECK: return %[[R]]#1
// FORCED-LABEL: func.func @f32_forward
// FORCED: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[WB:.*]] = %{{.*}}) -> (tensor<3xf32>, tensor<2x5xbf16>)
// FORCED: %[[WIDE:.*]] = arith.extf %[[WB]] : tensor<2x5xbf16> to tensor<2x5xf32>
// FORCED: arith.mulf %[[WIDE]], %{{.*}} : tensor<2x5xf32>
// FORCED: zero.all_gather %{{.*}} on @dp : tensor<3xbf16> -> tensor<12xbf16>
func.func @f32_forward(%w0: tensor<2x5xf32>, %x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<2x5xf32>
  // expected-remark @+1 {{gathering a 'tensor<2x5xf32>' weight in 'bf16' (gather-dtype): the forward pass reads a rounded copy, which changes results}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<2x5xf32>) {
    %gl = arith.mulf %w, %x : tensor<2x5xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<2x5xf32>
    %d = arith.mulf %g, %lr : tensor<2x5xf32>
    %w2 = arith.subf %w, %d : tensor<2x5xf32>
    scf.yield %w2 : tensor<2x5xf32>
  }
  return %r : tensor<2x5xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Nothing to defer: a loop whose carried value is not gathered from a shard
// (no gradient updates it) is left as it is.
// CHECK-LABEL: func.func @no_update
// CHECK: scf.for {{.*}} -> (tensor<8xf32>)
// CHECK-NOT: zero.
// CHECK: return
func.func @no_update(%v0: tensor<8xf32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%v = %v0) -> (tensor<8xf32>) {
    %v2 = arith.addf %v, %x : tensor<8xf32>
    scf.yield %v2 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A weight whose final value the function reads after the loop as well
// enters and leaves whole with shard-function-boundary, and a remark says
// why; so does the weight of a function that is called in the module.
// BOUNDARY-LABEL: func.func @read_after_the_loop
// BOUNDARY-SAME: (%{{.*}}: tensor<10xf32>, %{{.*}}: tensor<10xbf16>) -> (tensor<10xf32> {zero.state_of = 0 : i64}, tensor<10xbf16>)
// BOUNDARY: zero.shard_slice
// BOUNDARY: scf.for
// BREMARK: defer-all-gather.mlir:[[@LINE+6]]:8: remark: zero-defer-all-gather: the 'tensor<10xf32>' weight carried as iter_arg 0 enters and leaves the function whole, sliced before the loop and gathered after it: the function does not return the loop's result as it is
func.func @read_after_the_loop(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> (tensor<10xf32>, tensor<10xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
    %yb = arith.mulf %wb, %x : tensor<10xbf16>
    %gl = arith.extf %yb : tensor<10xbf16> to tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  %rb = arith.truncf %r : tensor<10xf32> to tensor<10xbf16>
  return %r, %rb : tensor<10xf32>, tensor<10xbf16>
}

// BREMARK: defer-all-gather.mlir:[[@LINE+1]]:1: remark: zero-defer-all-gather: the weights its training loop carries enter and leave whole, not sharded at the function boundary: the function is called in the module
func.func private @called_loop(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
    %yb = arith.mulf %wb, %x : tensor<10xbf16>
    %gl = arith.extf %yb : tensor<10xbf16> to tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}

func.func @calls_the_loop(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> tensor<10xf32> {
  %r = func.call @called_loop(%w0, %x) : (tensor<10xf32>, tensor<10xbf16>) -> tensor<10xf32>
  return %r : tensor<10xf32>
}
