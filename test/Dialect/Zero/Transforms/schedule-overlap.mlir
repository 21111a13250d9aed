// zero-schedule-overlap: each collective starts right after its input exists
// and is awaited right before its first use, when there is computation in
// between; all-gathers held before use are capped by max-in-flight-bytes; a
// gather whose result only the loop's next iteration reads is started at the
// end of one iteration and awaited in the next.

// RUN: zero-opt %s --split-input-file --zero-schedule-overlap | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-schedule-overlap=max-in-flight-bytes=4096 | FileCheck %s --check-prefix=BUDGET
// RUN: zero-opt %s --split-input-file --zero-schedule-overlap=max-in-flight-bytes=4096 2>&1 >/dev/null | FileCheck %s --check-prefix=BUDGET-REMARK
// RUN: zero-opt %s --split-input-file --zero-schedule-overlap 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: zero-opt %s --split-input-file --zero-schedule-overlap=across-iterations=false | FileCheck %s --check-prefix=BLOCKS
// RUN: not zero-opt %s --split-input-file --zero-schedule-overlap=bandwidth-gbps=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: zero-schedule-overlap: the cost model's rates must be positive and its latency not negative

zero.mesh @dp(shape = [4])

// The weight gradient's reduce-scatter starts as soon as the gradient (and
// its flattening, hoisted next to it) exists, and runs while the input
// gradient's matmul computes.
// CHECK-LABEL: func.func @backward_overlap
// CHECK: %[[GW:.*]] = linalg.matmul ins(%arg0, %arg1
// CHECK-NEXT: %[[FLAT:.*]] = tensor.collapse_shape %[[GW]]
// CHECK-NEXT: %[[F:.*]] = zero.async : !zero.future<tensor<1024xf32>> {
// CHECK-NEXT:   %[[S:.*]] = zero.reduce_scatter %[[FLAT]] on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
// CHECK-NEXT:   zero.yield %[[S]] : tensor<1024xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[GX:.*]] = linalg.matmul ins(%arg1, %arg0
// CHECK-NEXT: %[[V:.*]] = zero.await %[[F]] reads %[[FLAT]] : !zero.future<tensor<1024xf32>>, tensor<4096xf32>
// CHECK-NEXT: arith.subf %arg2, %[[V]]
func.func @backward_overlap(%x: tensor<64x64xf32>, %gy: tensor<64x64xf32>, %ws: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %gw = linalg.matmul ins(%x, %gy : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gx = linalg.matmul ins(%gy, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %gw [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %s = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  %w2 = arith.subf %ws, %s : tensor<1024xf32>
  return %w2, %gx : tensor<1024xf32>, tensor<64x64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Used right away: nothing to overlap, so it stays synchronous, and a remark
// says why.
// REMARK: schedule-overlap.mlir:[[@LINE+6]]:8: remark: not overlapped: nothing is computed between the definition of its input and its first use
// CHECK-LABEL: func.func @nothing_to_overlap
// CHECK-NOT: zero.async
// CHECK: zero.reduce_scatter
// CHECK-NOT: zero.await
func.func @nothing_to_overlap(%g: tensor<4096xf32>, %ws: tensor<1024xf32>) -> tensor<1024xf32> {
  %s = zero.reduce_scatter %g on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  %w2 = arith.subf %ws, %s : tensor<1024xf32>
  return %w2 : tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Two weights gathered for two layers. Without a cap both are prefetched at
// the top, issued in the order they are needed; with a cap of one gather
// (4096 bytes), the second starts once the first is used.
// CHECK-LABEL: func.func @prefetch
// CHECK: %[[FA:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %arg0
// CHECK: %[[FB:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %arg1
// CHECK: %[[Y1:.*]] = arith.mulf %arg2, %arg2
// CHECK-NEXT: %[[A:.*]] = zero.await %[[FA]] reads %arg0
// CHECK-NEXT: arith.mulf %[[Y1]], %[[A]]
// CHECK: %[[B:.*]] = zero.await %[[FB]] reads %arg1
// CHECK-NEXT: arith.mulf %{{.*}}, %[[B]]
// BUDGET-LABEL: func.func @prefetch
// BUDGET: %[[FA:.*]] = zero.async
// BUDGET-NEXT: zero.all_gather %arg0
// BUDGET: arith.mulf %arg2, %arg2
// BUDGET-NEXT: zero.await %[[FA]]
// BUDGET-NEXT: %[[FB:.*]] = zero.async
// BUDGET-NEXT: zero.all_gather %arg1
// BUDGET: zero.await %[[FB]]
func.func @prefetch(%a: tensor<256xf32>, %b: tensor<256xf32>, %x: tensor<1024xf32>) -> tensor<1024xf32> {
  %y1 = arith.mulf %x, %x : tensor<1024xf32>
  %ga = zero.all_gather %a on @dp : tensor<256xf32> -> tensor<1024xf32>
  %y2 = arith.mulf %y1, %ga : tensor<1024xf32>
  %y3 = arith.mulf %y2, %y2 : tensor<1024xf32>
  %gb = zero.all_gather %b on @dp : tensor<256xf32> -> tensor<1024xf32>
  %y4 = arith.mulf %y3, %gb : tensor<1024xf32>
  return %y4 : tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A gather larger than the cap on its own is not prefetched, with a remark.
// BUDGET-REMARK: schedule-overlap.mlir:[[@LINE+5]]:9: remark: not overlapped: started any earlier, the weights gathered before their use would exceed max-in-flight-bytes (4096)
// BUDGET-LABEL: func.func @over_budget
// BUDGET-NOT: zero.async
// BUDGET: zero.all_gather %arg0
func.func @over_budget(%a: tensor<512xf32>, %x: tensor<2048xf32>) -> tensor<2048xf32> {
  %ga = zero.all_gather %a on @dp : tensor<512xf32> -> tensor<2048xf32>
  %y1 = arith.mulf %x, %x : tensor<2048xf32>
  %y2 = arith.mulf %y1, %ga : tensor<2048xf32>
  return %y2 : tensor<2048xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A collective of an awaited value starts after that await.
// CHECK-LABEL: func.func @chained
// CHECK: %[[F1:.*]] = zero.async
// CHECK-NEXT: zero.all_reduce %arg0
// CHECK: arith.mulf %arg1, %arg1
// CHECK-NEXT: %[[R1:.*]] = zero.await %[[F1]] reads %arg0
// CHECK-NEXT: %[[F2:.*]] = zero.async
// CHECK-NEXT: zero.all_reduce %[[R1]]
// CHECK: arith.addf
// CHECK-NEXT: %[[R2:.*]] = zero.await %[[F2]] reads %[[R1]]
func.func @chained(%g: tensor<1024xf32>, %x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %r1 = zero.all_reduce %g on @dp reduce = sum : tensor<1024xf32>
  %y = arith.mulf %x, %x : tensor<1024xf32>
  %r2 = zero.all_reduce %r1 on @dp reduce = sum : tensor<1024xf32>
  %z = arith.addf %y, %r1 : tensor<1024xf32>
  %w = arith.addf %z, %r2 : tensor<1024xf32>
  return %w, %z : tensor<1024xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A new weight the function only returns, through the slices that cut a
// bucket's members out: gathered from the top, it is awaited right after
// the reduce-scatter issued after it (left synchronous: its result is used
// at once by a call), which completes after it, rather than before the
// return; the gathered bucket is then freed once its members are copied
// into their arguments, before the rest of the step.
// CHECK-LABEL: func.func @returned_gather_awaited_early
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %arg0
// CHECK: linalg.matmul
// CHECK: zero.reduce_scatter
// CHECK-NEXT: %[[A:.*]] = zero.await %[[F]] reads %arg0
// CHECK-NEXT: call @consume
// CHECK: linalg.matmul
// CHECK: tensor.extract_slice %[[A]][0]
// CHECK: return
func.func private @consume(tensor<1024xf32>)
func.func @returned_gather_awaited_early(%shard: tensor<1024xf32>, %x: tensor<64x64xf32>)
    -> (tensor<2048xf32>, tensor<2048xf32>, tensor<64x64xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<1024xf32> -> tensor<4096xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %m [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %r = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  func.call @consume(%r) : (tensor<1024xf32>) -> ()
  %m2 = linalg.matmul ins(%x, %m : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %w0 = tensor.extract_slice %all[0] [2048] [1] : tensor<4096xf32> to tensor<2048xf32>
  %w1 = tensor.extract_slice %all[2048] [2048] [1] : tensor<4096xf32> to tensor<2048xf32>
  return %w0, %w1, %m2 : tensor<2048xf32>, tensor<2048xf32>, tensor<64x64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Negative: the gathered weight is also computed with, so it is awaited
// before that use, as any other.
// CHECK-LABEL: func.func @gather_used_awaited_at_use
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %arg0
// CHECK: zero.reduce_scatter
// CHECK-NEXT: call @consume
// CHECK: linalg.matmul
// CHECK: %[[A:.*]] = zero.await %[[F]] reads %arg0
// CHECK-NEXT: arith.addf %[[A]], %[[A]]
func.func private @consume(tensor<1024xf32>)
func.func @gather_used_awaited_at_use(%shard: tensor<1024xf32>, %x: tensor<64x64xf32>)
    -> (tensor<4096xf32>, tensor<64x64xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<1024xf32> -> tensor<4096xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %m [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %r = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  func.call @consume(%r) : (tensor<1024xf32>) -> ()
  %m2 = linalg.matmul ins(%x, %m : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %twice = arith.addf %all, %all : tensor<4096xf32>
  return %twice, %m2 : tensor<4096xf32>, tensor<64x64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A new weight (the result marked `zero.state_of` its argument) whose shard
// is ready from the top, as a delayed update makes it: its gather starts
// after the last read of the old weight, not beside it, so that the
// lowering can gather into the argument, and runs behind the rest.
// CHECK-LABEL: func.func @gather_after_old_reads
// CHECK: linalg.matmul
// CHECK: arith.mulf %arg0, %arg0
// CHECK-NEXT: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %arg1
// CHECK: linalg.matmul
// CHECK: zero.await %[[F]]
// CHECK-NEXT: return
func.func @gather_after_old_reads(%w: tensor<4096xf32>, %shard: tensor<1024xf32>, %x: tensor<64x64xf32>)
    -> (tensor<4096xf32> {zero.state_of = 0 : i64}, tensor<64x64xf32>, tensor<4096xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<1024xf32> -> tensor<4096xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %read = arith.mulf %w, %w : tensor<4096xf32>
  %m2 = linalg.matmul ins(%x, %m : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %all, %m2, %read : tensor<4096xf32>, tensor<64x64xf32>, tensor<4096xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The same without the mark: nothing says which argument the gather
// replaces, and it starts at the top.
// CHECK-LABEL: func.func @gather_unmarked
// CHECK-NEXT: zero.async
// CHECK-NEXT: zero.all_gather %arg1
func.func @gather_unmarked(%w: tensor<4096xf32>, %shard: tensor<1024xf32>, %x: tensor<64x64xf32>)
    -> (tensor<4096xf32>, tensor<64x64xf32>, tensor<4096xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<1024xf32> -> tensor<4096xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %read = arith.mulf %w, %w : tensor<4096xf32>
  %m2 = linalg.matmul ins(%x, %m : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %all, %m2, %read : tensor<4096xf32>, tensor<64x64xf32>, tensor<4096xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The old weight is read last: nothing is left to overlap, and a remark
// says why.
// REMARK: schedule-overlap.mlir:[[@LINE+5]]:10: remark: not overlapped: nothing is computed between the last read of the state it replaces and its first use
// CHECK-LABEL: func.func @old_weight_read_last
// CHECK-NOT: zero.async
func.func @old_weight_read_last(%w: tensor<4096xf32>, %shard: tensor<1024xf32>, %x: tensor<64x64xf32>)
    -> (tensor<4096xf32> {zero.state_of = 0 : i64}, tensor<64x64xf32>, tensor<4096xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<1024xf32> -> tensor<4096xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %m = linalg.matmul ins(%x, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %read = arith.mulf %w, %w : tensor<4096xf32>
  return %all, %m, %read : tensor<4096xf32>, tensor<64x64xf32>, tensor<4096xf32>
}

// -----

zero.mesh @dp(shape = [4])
zero.mesh @one(shape = [1])

// Inside a loop the body is scheduled on its own; collectives on a group of
// one rank, and those already asynchronous, are left alone.
// CHECK-LABEL: func.func @loop_body
// CHECK: scf.for
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_reduce %[[G:.*]] on @dp
// CHECK: arith.mulf
// CHECK-NEXT: zero.all_reduce %{{.*}} on @one
// CHECK-NEXT: zero.await %[[F]] reads %[[G]]
// CHECK: %[[MINE:.*]] = zero.async
// CHECK-NEXT: zero.all_reduce %arg0 on @dp reduce = max
// CHECK: zero.await %[[MINE]]
func.func @loop_body(%v0: tensor<1024xf32>, %x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%v = %v0) -> (tensor<1024xf32>) {
    %g = arith.mulf %v, %x : tensor<1024xf32>
    %s = zero.all_reduce %g on @dp reduce = sum : tensor<1024xf32>
    %y = arith.mulf %x, %x : tensor<1024xf32>
    %t = zero.all_reduce %y on @one reduce = sum : tensor<1024xf32>
    %n = arith.addf %s, %t : tensor<1024xf32>
    scf.yield %n : tensor<1024xf32>
  }
  %f = zero.async : !zero.future<tensor<1024xf32>> {
    %m = zero.all_reduce %v0 on @dp reduce = max : tensor<1024xf32>
    zero.yield %m : tensor<1024xf32>
  }
  %m = zero.await %f reads %v0 : !zero.future<tensor<1024xf32>>, tensor<1024xf32>
  return %r, %m : tensor<1024xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Hoisting the padding before a reduce-scatter keeps the padding value (used
// in the pad's region) above it.
// CHECK-LABEL: func.func @pad_value
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = tensor.pad %arg0
// CHECK: tensor.yield %[[ZERO]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.reduce_scatter %[[P]]
// CHECK: arith.mulf
// CHECK-NEXT: zero.await %[[F]] reads %[[P]]
func.func @pad_value(%g: tensor<10xf32>, %x: tensor<1024xf32>) -> (tensor<3xf32>, tensor<1024xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = arith.mulf %x, %x : tensor<1024xf32>
  %p = tensor.pad %g low[0] high[2] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<10xf32> to tensor<12xf32>
  %s = zero.reduce_scatter %p on @dp reduce = sum : tensor<12xf32> -> tensor<3xf32>
  return %s, %y : tensor<3xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The update written right after the reduce-scatter sinks to its use (the
// return), so the reduce-scatter runs while the input gradient's matmul
// computes instead of ending at once.
// CHECK-LABEL: func.func @sink_update
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.reduce_scatter
// CHECK: %[[GX:.*]] = linalg.matmul ins(%arg1, %arg0
// CHECK-NEXT: %[[V:.*]] = zero.await %[[F]]
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[V]], %arg3
// CHECK-NEXT: arith.subf %arg2, %[[D]]
// CHECK-NEXT: return
func.func @sink_update(%x: tensor<64x64xf32>, %gy: tensor<64x64xf32>, %ws: tensor<1024xf32>, %lr: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %gw = linalg.matmul ins(%x, %gy : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %gw [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %s = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  %d = arith.mulf %s, %lr : tensor<1024xf32>
  %w2 = arith.subf %ws, %d : tensor<1024xf32>
  %gx = linalg.matmul ins(%gy, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %w2, %gx : tensor<1024xf32>, tensor<64x64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A consumer with memory effects (the store) does not move, nor does what
// it reads move past it: the reduce-scatter is awaited before the matmul
// and stays synchronous.
// CHECK-LABEL: func.func @no_sink_past_effects
// CHECK-NOT: zero.async
// CHECK: zero.reduce_scatter
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: tensor.extract
// CHECK-NEXT: memref.store
// CHECK-NEXT: linalg.matmul ins(%arg1, %arg0
func.func @no_sink_past_effects(%x: tensor<64x64xf32>, %gy: tensor<64x64xf32>, %lr: tensor<1024xf32>, %out: memref<f32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<64x64xf32>
  %gw = linalg.matmul ins(%x, %gy : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %gw [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %s = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  %d = arith.mulf %s, %lr : tensor<1024xf32>
  %v = tensor.extract %d[%c0] : tensor<1024xf32>
  memref.store %v, %out[] : memref<f32>
  %gx = linalg.matmul ins(%gy, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %gx : tensor<64x64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Across the back edge: the gather of the new shard, which the loop carries
// whole to the next iteration, starts after the last read of the carried
// weight and is awaited where the next iteration first reads it, after the
// computation that does not need it. The first iteration awaits a ready
// future of the initial weight; the last gather is awaited after the loop.
// CHECK-LABEL: func.func @carried_gather
// CHECK-SAME: (%[[W0:[^:]*]]: tensor<16xf32>, %[[S0:[^:]*]]: tensor<4xf32>, %[[X:[^:]*]]: tensor<1024xf32>)
// CHECK: %[[F0:.*]] = zero.ready %[[W0]] : tensor<16xf32>
// CHECK: %[[R:.*]]:3 = scf.for {{.*}} iter_args(%[[S:.*]] = %[[S0]], %[[Y:.*]] = %[[X]], %[[F:.*]] = %[[F0]]) -> (tensor<4xf32>, tensor<1024xf32>, !zero.future<tensor<16xf32>>) {
// CHECK-NEXT: %[[Y2:.*]] = arith.mulf %[[Y]], %[[Y]]
// CHECK-NEXT: %[[W:.*]] = zero.await %[[F]] : !zero.future<tensor<16xf32>>
// CHECK-NEXT: %[[E:.*]] = tensor.extract_slice %[[W]][0] [4] [1]
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S]], %[[E]]
// CHECK-NEXT: %[[F2:.*]] = zero.async : !zero.future<tensor<16xf32>> {
// CHECK-NEXT:   zero.all_gather %[[S2]] on @dp
// CHECK: scf.yield %[[S2]], %[[Y2]], %[[F2]] : tensor<4xf32>, tensor<1024xf32>, !zero.future<tensor<16xf32>>
// CHECK: %[[WL:.*]] = zero.await %[[R]]#2 : !zero.future<tensor<16xf32>>
// CHECK: return %[[WL]], %[[R]]#1
// Without across-iterations the gather is scheduled within its iteration.
// BLOCKS-LABEL: func.func @carried_gather
// BLOCKS-NOT: zero.ready
// BLOCKS: zero.async
// BLOCKS-NEXT: zero.all_gather
// BLOCKS: zero.await
// BLOCKS-NEXT: scf.yield
func.func @carried_gather(%w0: tensor<16xf32>, %s0: tensor<4xf32>, %x: tensor<1024xf32>) -> (tensor<16xf32>, tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %w = %w0, %y = %x) -> (tensor<4xf32>, tensor<16xf32>, tensor<1024xf32>) {
    %y2 = arith.mulf %y, %y : tensor<1024xf32>
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    scf.yield %s2, %g, %y2 : tensor<4xf32>, tensor<16xf32>, tensor<1024xf32>
  }
  return %r#1, %r#2 : tensor<16xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A bucket: one gather unpacked into two carried weights. The first
// iteration's future packs the initial weights the way the gather lays them
// out (the unpacking run backwards; the padding is zero), and each await is
// unpacked again.
// CHECK-LABEL: func.func @carried_bucket
// CHECK-SAME: (%[[A0:[^:]*]]: tensor<2x4xf32>, %[[B0:[^:]*]]: tensor<4xf32>,
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[P1:.*]] = tensor.insert_slice %[[B0]] into %[[FILL]][8] [4] [1]
// CHECK: %[[FA:.*]] = tensor.collapse_shape %[[A0]] {{\[\[}}0, 1]] : tensor<2x4xf32> into tensor<8xf32>
// CHECK: %[[P2:.*]] = tensor.insert_slice %[[FA]] into %[[P1]][0] [8] [1]
// CHECK: %[[F0:.*]] = zero.ready %[[P2]] : tensor<16xf32>
// CHECK: scf.for {{.*}} -> (tensor<4xf32>, tensor<1024xf32>, !zero.future<tensor<16xf32>>)
// CHECK: %[[G:.*]] = zero.await
// CHECK-NEXT: %[[GA:.*]] = tensor.extract_slice %[[G]][0] [8] [1]
// CHECK-NEXT: %[[A:.*]] = tensor.expand_shape %[[GA]]
// CHECK-NEXT: %[[B:.*]] = tensor.extract_slice %[[G]][8] [4] [1]
// CHECK: zero.async
// CHECK: %[[GL:.*]] = zero.await
// CHECK: tensor.extract_slice %[[GL]][0] [8] [1]
func.func @carried_bucket(%a0: tensor<2x4xf32>, %b0: tensor<4xf32>, %s0: tensor<4xf32>, %x: tensor<1024xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %a = %a0, %b = %b0, %y = %x) -> (tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<1024xf32>) {
    %y2 = arith.mulf %y, %y : tensor<1024xf32>
    %ab = arith.addf %s, %b : tensor<4xf32>
    %a1 = tensor.extract_slice %a[0, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<4xf32>
    %s2 = arith.addf %ab, %a1 : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    %ga = tensor.extract_slice %g[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
    %a2 = tensor.expand_shape %ga [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
    %b2 = tensor.extract_slice %g[8] [4] [1] : tensor<16xf32> to tensor<4xf32>
    scf.yield %s2, %a2, %b2, %y2 : tensor<4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<1024xf32>
  }
  return %r#1, %r#2, %r#3 : tensor<2x4xf32>, tensor<4xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The carried weight is read first thing and nothing follows the gather:
// no computation to overlap, so the loop is left as it is.
// CHECK-LABEL: func.func @carried_no_window
// CHECK-NOT: zero.ready
// CHECK-NOT: zero.async
// CHECK: zero.all_gather
func.func @carried_no_window(%w0: tensor<16xf32>, %s0: tensor<4xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %w = %w0) -> (tensor<4xf32>, tensor<16xf32>) {
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    scf.yield %s2, %g : tensor<4xf32>, tensor<16xf32>
  }
  return %r#1 : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Not carried: the gathered value is also read in its own iteration; the
// gather is scheduled within the body instead.
// REMARK: remark: not prefetched across the loop's back edge: a carried copy is also read in the body
// CHECK-LABEL: func.func @carried_and_read
// CHECK-NOT: zero.ready
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather
// CHECK: arith.mulf
// CHECK-NEXT: zero.await %[[F]] reads
func.func @carried_and_read(%w0: tensor<16xf32>, %s0: tensor<4xf32>, %x: tensor<1024xf32>) -> (tensor<16xf32>, tensor<1024xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %w = %w0, %y = %x, %z = %w0) -> (tensor<4xf32>, tensor<16xf32>, tensor<1024xf32>, tensor<16xf32>) {
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    %y2 = arith.mulf %y, %y : tensor<1024xf32>
    %z2 = arith.addf %z, %g : tensor<16xf32>
    scf.yield %s2, %g, %y2, %z2 : tensor<4xf32>, tensor<16xf32>, tensor<1024xf32>, tensor<16xf32>
  }
  return %r#1, %r#2, %r#3 : tensor<16xf32>, tensor<1024xf32>, tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Two carried copies share elements of the gathered tensor: packing the
// initial ones could not give both back.
// REMARK: remark: not prefetched across the loop's back edge: the carried copies overlap in the gathered tensor
// CHECK-LABEL: func.func @carried_overlap
// CHECK-NOT: zero.ready
func.func @carried_overlap(%a0: tensor<8xf32>, %b0: tensor<8xf32>, %s0: tensor<4xf32>, %x: tensor<1024xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %a = %a0, %b = %b0, %y = %x) -> (tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1024xf32>) {
    %y2 = arith.mulf %y, %y : tensor<1024xf32>
    %a1 = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %b1 = tensor.extract_slice %b[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %ab = arith.addf %a1, %b1 : tensor<4xf32>
    %s2 = arith.addf %s, %ab : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    %a2 = tensor.extract_slice %g[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
    %b2 = tensor.extract_slice %g[4] [8] [1] : tensor<16xf32> to tensor<8xf32>
    scf.yield %s2, %a2, %b2, %y2 : tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1024xf32>
  }
  return %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The loop also carries a view of the weight: the next iteration would read
// it while the gather writes the same buffer.
// REMARK: remark: not prefetched across the loop's back edge: the loop yields a view of a carried copy
// CHECK-LABEL: func.func @carried_view_yielded
// CHECK-NOT: zero.ready
func.func @carried_view_yielded(%w0: tensor<16xf32>, %s0: tensor<4xf32>, %x: tensor<1024xf32>) -> (tensor<16xf32>, tensor<4xf32>, tensor<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %w = %w0, %old = %s0, %y = %x) -> (tensor<4xf32>, tensor<16xf32>, tensor<4xf32>, tensor<1024xf32>) {
    %y2 = arith.mulf %y, %y : tensor<1024xf32>
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
    scf.yield %s2, %g, %e, %y2 : tensor<4xf32>, tensor<16xf32>, tensor<4xf32>, tensor<1024xf32>
  }
  return %r#1, %r#2, %r#3 : tensor<16xf32>, tensor<4xf32>, tensor<1024xf32>
}
