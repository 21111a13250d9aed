// zero-donate-state: a state result (the next value of an argument) is made
// in its argument's tensor, and the argument is marked donated to it; a
// result that no destination-style op makes is left alone with a remark.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-donate-state))' --verify-diagnostics | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// The fused update of w and m writes into w and m (each result paired by
// its own payload: m2 is nearer m than g); g is no state.
// CHECK-LABEL: func.func @sgd_momentum
// CHECK-SAME: (%[[W:.*]]: tensor<8xf32> {zero.aliasing_output = 0 : i64}, %[[M:.*]]: tensor<8xf32> {zero.aliasing_output = 1 : i64}, %[[G:.*]]: tensor<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[M]], %[[G]] : {{.*}}) outs(%[[W]], %[[M]] : tensor<8xf32>, tensor<8xf32>)
func.func @sgd_momentum(%w: tensor<8xf32>, %m: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %m, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
      outs(%e0, %e1 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%wi: f32, %mi: f32, %gi: f32, %o0: f32, %o1: f32):
    %gs = arith.mulf %gi, %gi : f32
    %m2 = arith.addf %mi, %gs : f32
    %w2 = arith.subf %wi, %m2 : f32
    linalg.yield %w2, %m2 : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A result made by an op that reads its destination (an accumulation) is
// not made in the argument.
// CHECK-LABEL: func.func @reads_destination
// CHECK-NOT: zero.aliasing_output
// CHECK: outs(%{{.*}} : tensor<8xf32>)
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: the op that makes it reads its destination}}
func.func @reads_destination(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%wi: f32, %gi: f32, %o: f32):
    %d = arith.mulf %gi, %o : f32
    %w2 = arith.subf %wi, %d : f32
    linalg.yield %w2 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A delayed update's step-0 guard (zero-delay-update) picks the new weight
// or the old in the [N][chunk] shape of the weight's bucket, collapsed to
// the weight's shape: the guard writes into the argument, seen in its shape
// (the reverse of the collapse), and the argument is donated.
// CHECK-LABEL: func.func @reshaped_result
// CHECK-SAME: (%[[W:[a-z0-9]+]]: tensor<8xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[OLD:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [4, 2]
// CHECK: %[[DEST:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [4, 2]
// CHECK: %[[SEL:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[OLD]] : {{.*}}) outs(%[[DEST]] : tensor<4x2xf32>)
// CHECK: %[[NEW:.*]] = tensor.collapse_shape %[[SEL]] {{\[\[}}0, 1]]
// CHECK: return %[[NEW]]
func.func @reshaped_result(%w: tensor<8xf32>, %gathered: tensor<4x2xf32>, %first: i1) -> tensor<8xf32> {
  %old = tensor.expand_shape %w [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x2xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%gathered, %old : tensor<4x2xf32>, tensor<4x2xf32>) outs(%e : tensor<4x2xf32>) {
  ^bb0(%n: f32, %o: f32, %out: f32):
    %r = arith.select %first, %o, %n : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %new = tensor.collapse_shape %s [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  return %new : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Through a reshape, a result whose op reads its destination keeps its
// buffer, with the reason of the op beneath the reshape.
// CHECK-LABEL: func.func @reshaped_reads_destination
// CHECK-NOT: zero.aliasing_output
// CHECK: outs(%{{.*}} : tensor<4x2xf32>)
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: the op that makes it reads its destination}}
func.func @reshaped_reads_destination(%w: tensor<8xf32>, %g: tensor<4x2xf32>) -> tensor<8xf32> {
  %old = tensor.expand_shape %w [[0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x2xf32>) outs(%old : tensor<4x2xf32>) {
  ^bb0(%gi: f32, %o: f32):
    %r = arith.subf %o, %gi : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %new = tensor.collapse_shape %s [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  return %new : tensor<8xf32>
}

// -----

// A state result that a collective makes keeps its buffer, with the reason.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @collective_result
// CHECK-NOT: zero.aliasing_output
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is made by 'zero.all_reduce', not by a linalg op with a destination}}
func.func @collective_result(%w: tensor<8xf32>) -> tensor<8xf32> {
  %r = zero.all_reduce %w on @dp reduce = sum : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A sharded step's new weight is a slice of the gathered bucket (here the
// second of two weights, rank-major, 4 ranks): bufferized as it stands, it
// would be copied into a buffer of its own to be returned. It is copied
// into its argument instead, seen in the slice's shape; the reshape that
// made the result from the slice is dropped.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @gathered_slice
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<12xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[ALL:.*]] = zero.all_gather
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[ALL]]
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[ROWS]][0, 2] [4, 3] [1, 1]
// CHECK-NOT: tensor.collapse_shape %[[SLICE]]
// CHECK: %[[DEST:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[SLICE]] in %[[DEST]]
// CHECK: %[[NEW:.*]] = tensor.collapse_shape %[[COPY]] {{\[\[}}0, 1]]
// CHECK: return %[[NEW]]
func.func @gathered_slice(%w: tensor<12xf32>, %shards: tensor<5xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}) {
  %all = zero.all_gather %shards on @dp : tensor<5xf32> -> tensor<20xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
  %slice = tensor.extract_slice %rows[0, 2] [4, 3] [1, 1] : tensor<4x5xf32> to tensor<4x3xf32>
  %w2 = tensor.collapse_shape %slice [[0, 1]] : tensor<4x3xf32> into tensor<12xf32>
  return %w2 : tensor<12xf32>
}

// -----

// Each member of a bucket is copied into its argument as soon as its slice
// is made and its old value is read no more, not before the return: there,
// every bucket's gathered buffer would be held until the step's end at
// once. Here the step reads the second weight's new value (a norm) before
// its old one, so the gather stays where it is (it moves down past the
// reads of its members' old values only up to its result's first use:
// @delayed_bucket_moves), and that member's copy follows the read; the
// first's precedes it. Both precede the work that reads neither (the
// addf, which a step's result would use).
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @bucket_copied_early
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<4xf32> {zero.aliasing_output = 0 : i64}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<6xf32> {zero.aliasing_output = 1 : i64}
// CHECK: zero.all_gather
// CHECK: %[[SA:.*]] = tensor.extract_slice {{.*}}[0, 0] [2, 2]
// CHECK-NEXT: %[[DA:.*]] = tensor.expand_shape %[[A]]
// CHECK-NEXT: %[[CA:.*]] = bufferization.materialize_in_destination %[[SA]] in %[[DA]]
// CHECK-NEXT: %[[NA:.*]] = tensor.collapse_shape %[[CA]]
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice {{.*}}[0, 2] [2, 3]
// CHECK-NEXT: %[[B2:.*]] = tensor.collapse_shape %[[SB]]
// CHECK-NEXT: %[[NORM:.*]] = arith.mulf %[[B2]], %[[B2]]
// CHECK-NEXT: %[[READ:.*]] = arith.mulf %[[B]], %[[B]]
// CHECK-NEXT: %[[DB:.*]] = tensor.expand_shape %[[B]]
// CHECK-NEXT: %[[CB:.*]] = bufferization.materialize_in_destination %[[SB]] in %[[DB]]
// CHECK-NEXT: %[[NB:.*]] = tensor.collapse_shape %[[CB]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return %[[NA]], %[[NB]], %[[NORM]], %[[READ]]
func.func @bucket_copied_early(%a: tensor<4xf32>, %b: tensor<6xf32>,
                               %shards: tensor<5xf32>, %x: tensor<8xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64},
        tensor<6xf32> {zero.state_of = 1 : i64}, tensor<6xf32>, tensor<6xf32>) {
  %all = zero.all_gather %shards on @dp : tensor<5xf32> -> tensor<10xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [2, 5] : tensor<10xf32> into tensor<2x5xf32>
  %sa = tensor.extract_slice %rows[0, 0] [2, 2] [1, 1] : tensor<2x5xf32> to tensor<2x2xf32>
  %a2 = tensor.collapse_shape %sa [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %sb = tensor.extract_slice %rows[0, 2] [2, 3] [1, 1] : tensor<2x5xf32> to tensor<2x3xf32>
  %b2 = tensor.collapse_shape %sb [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %norm = arith.mulf %b2, %b2 : tensor<6xf32>
  %read = arith.mulf %b, %b : tensor<6xf32>
  %later = arith.addf %x, %x : tensor<8xf32>
  return %a2, %b2, %norm, %read : tensor<4xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----

// A delayed update's bucket is gathered before the step reads its members'
// old weights: the gather, and the views that cut the members out of it,
// move down past those reads (as a weight gathered alone does), so that
// the gathered buffer is not held through them, and what makes the new
// shards' pack follows it down. The members are then copied out at once.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_bucket_moves
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<4xf32> {zero.aliasing_output = 0 : i64}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<6xf32> {zero.aliasing_output = 1 : i64}
// CHECK: %[[RA:.*]] = arith.mulf %[[A]], %[[A]]
// CHECK-NEXT: %[[RB:.*]] = arith.mulf %[[B]], %[[B]]
// CHECK-NEXT: %[[NEW:.*]] = arith.addf
// CHECK-NEXT: %[[PACK:.*]] = tensor.concat dim(0) %[[NEW]]
// CHECK-NEXT: %[[ALL:.*]] = zero.all_gather %[[PACK]]
// CHECK-NEXT: %[[ROWS:.*]] = tensor.expand_shape %[[ALL]]
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[ROWS]][0, 0] [2, 2]
// CHECK-NEXT: expand_shape %[[A]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SA]]
// CHECK-NEXT: collapse_shape
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice %[[ROWS]][0, 2] [2, 3]
// CHECK-NEXT: expand_shape %[[B]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SB]]
// CHECK-NEXT: collapse_shape
// CHECK-NEXT: return
func.func @delayed_bucket_moves(%a: tensor<4xf32>, %b: tensor<6xf32>,
                                %sa: tensor<2xf32>, %sb: tensor<3xf32>,
                                %ua: tensor<2xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64},
        tensor<6xf32> {zero.state_of = 1 : i64}, tensor<4xf32>, tensor<6xf32>) {
  %na = arith.addf %sa, %ua : tensor<2xf32>
  %pack = tensor.concat dim(0) %na, %sb : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  %all = zero.all_gather %pack on @dp : tensor<5xf32> -> tensor<10xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [2, 5] : tensor<10xf32> into tensor<2x5xf32>
  %ca = tensor.extract_slice %rows[0, 0] [2, 2] [1, 1] : tensor<2x5xf32> to tensor<2x2xf32>
  %a2 = tensor.collapse_shape %ca [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %cb = tensor.extract_slice %rows[0, 2] [2, 3] [1, 1] : tensor<2x5xf32> to tensor<2x3xf32>
  %b2 = tensor.collapse_shape %cb [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %ra = arith.mulf %a, %a : tensor<4xf32>
  %rb = arith.mulf %b, %b : tensor<6xf32>
  return %a2, %b2, %ra, %rb : tensor<4xf32>, tensor<6xf32>, tensor<4xf32>, tensor<6xf32>
}

// -----

// The same where some state lives in host memory (offload=optimizer: here
// the moment the update reads): the gather moves down, but what makes its
// input stays, since that update runs on the host queue, started early so
// as to run beside the forward and backward; the pack is 1/N of what the
// gather holds.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_offloaded_bucket_moves
// CHECK: %[[NEW:.*]] = arith.addf
// CHECK-NEXT: %[[PACK:.*]] = tensor.concat dim(0) %[[NEW]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: zero.all_gather %[[PACK]]
func.func @delayed_offloaded_bucket_moves(
    %a: tensor<4xf32>, %b: tensor<6xf32>, %sa: tensor<2xf32>,
    %sb: tensor<3xf32>, %ua: tensor<2xf32> {zero.memory = "host"})
    -> (tensor<4xf32> {zero.state_of = 0 : i64},
        tensor<6xf32> {zero.state_of = 1 : i64}, tensor<4xf32>, tensor<6xf32>) {
  %na = arith.addf %sa, %ua : tensor<2xf32>
  %pack = tensor.concat dim(0) %na, %sb : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  %all = zero.all_gather %pack on @dp : tensor<5xf32> -> tensor<10xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [2, 5] : tensor<10xf32> into tensor<2x5xf32>
  %ca = tensor.extract_slice %rows[0, 0] [2, 2] [1, 1] : tensor<2x5xf32> to tensor<2x2xf32>
  %a2 = tensor.collapse_shape %ca [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %cb = tensor.extract_slice %rows[0, 2] [2, 3] [1, 1] : tensor<2x5xf32> to tensor<2x3xf32>
  %b2 = tensor.collapse_shape %cb [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %ra = arith.mulf %a, %a : tensor<4xf32>
  %rb = arith.mulf %b, %b : tensor<6xf32>
  return %a2, %b2, %ra, %rb : tensor<4xf32>, tensor<6xf32>, tensor<4xf32>, tensor<6xf32>
}

// -----

// A weight all-gathered on its own (too large for a bucket), reshaped back
// to its shape: the gather's result is copied into the argument, seen in
// the gather's shape, and zero-forward-collective-outputs then has the
// gather write there. The gather moves up to just after the last read of
// the old weight (its shard is made earlier), ahead of the work that does
// not read the weight.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @gathered_alone
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[READ:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT: %[[ALL:.*]] = zero.all_gather
// CHECK-NEXT: arith.addf
// CHECK-NOT: tensor.expand_shape %[[ALL]]
// CHECK: %[[DEST:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1]]
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[ALL]] in %[[DEST]]
// CHECK: %[[NEW:.*]] = tensor.expand_shape %[[COPY]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK: return %[[NEW]], %[[READ]]
func.func @gathered_alone(%w: tensor<4x3xf32>, %shard: tensor<6xf32>, %x: tensor<8xf32>)
    -> (tensor<4x3xf32> {zero.state_of = 0 : i64}, tensor<4x3xf32>) {
  %read = arith.mulf %w, %w : tensor<4x3xf32>
  %later = arith.addf %x, %x : tensor<8xf32>
  %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
  %w2 = tensor.expand_shape %all [[0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
  return %w2, %read : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A delayed update (zero-delay-update) gathers its new weight before the
// step reads the old one: the gather moves down to just after that read,
// where the old value is dead, so that zero-forward-collective-outputs can
// gather into the argument and the step holds no second copy.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @gathered_before_read
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<12xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[READ:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT: %[[ALL:.*]] = zero.all_gather
// CHECK: bufferization.materialize_in_destination %[[ALL]] in %[[W]]
func.func @gathered_before_read(%w: tensor<12xf32>, %shard: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<12xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
  %read = arith.mulf %w, %w : tensor<12xf32>
  return %all, %read : tensor<12xf32>, tensor<12xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A delayed update makes the new shard and the new moment, and guards the
// moment for the first step, before the step reads the old weight: the
// gather moves down past that read, and what makes its input moves down
// to just before it (the update, the guard of the update's other result,
// the view of the old shard the update alone reads, its destination), so
// that the step does not hold the new shard through the read.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_update_sinks
// CHECK: %[[READ:.*]] = arith.mulf
// CHECK-NEXT: %[[OLD:.*]] = tensor.extract_slice
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[NEW:.*]]:2 = linalg.generic {{.*}} ins(%[[OLD]]
// CHECK-NEXT: ^bb0
// CHECK: %[[GUARD:.*]] = arith.select %{{.*}}, %{{.*}}, %[[NEW]]#1
// CHECK-NEXT: %[[ALL:.*]] = zero.all_gather %[[NEW]]#0
// CHECK: return %{{.*}}, %[[GUARD]], %[[READ]]
// expected-remark @+1 {{zero-donate-state: result 1 (the next value of argument 1) keeps a buffer of its own: it is made by 'arith.select', not by a linalg op with a destination}}
func.func @delayed_update_sinks(%w: tensor<12xf32>, %m: tensor<6xf32>, %g: tensor<6xf32>,
                                %first: i1)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<6xf32> {zero.state_of = 1 : i64}, tensor<12xf32>) {
  %old = tensor.extract_slice %w[0] [6] [1] : tensor<12xf32> to tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %new:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %m, %g : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) outs(%e, %e : tensor<6xf32>, tensor<6xf32>) {
  ^bb0(%wi: f32, %mi: f32, %gi: f32, %o0: f32, %o1: f32):
    %m2 = arith.addf %mi, %gi : f32
    %w2 = arith.subf %wi, %m2 : f32
    linalg.yield %w2, %m2 : f32, f32
  } -> (tensor<6xf32>, tensor<6xf32>)
  %guard = arith.select %first, %m, %new#1 : tensor<6xf32>
  %all = zero.all_gather %new#0 on @dp : tensor<6xf32> -> tensor<12xf32>
  %read = arith.mulf %w, %w : tensor<12xf32>
  return %all, %guard, %read : tensor<12xf32>, tensor<6xf32>, tensor<12xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// The same, but a collective reads the update's other result before the
// old weight's last read: it cannot move, so neither does the update; the
// gather alone moves down.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_update_stays
// CHECK: %[[NEW:.*]]:2 = linalg.generic
// CHECK: zero.all_reduce %[[NEW]]#1
// CHECK: arith.mulf
// CHECK-NEXT: zero.all_gather %[[NEW]]#0
// expected-remark @+1 {{zero-donate-state: result 1 (the next value of argument 1) keeps a buffer of its own: it is made by 'zero.all_reduce', not by a linalg op with a destination}}
func.func @delayed_update_stays(%w: tensor<12xf32>, %m: tensor<6xf32>, %g: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<6xf32> {zero.state_of = 1 : i64}, tensor<12xf32>) {
  %old = tensor.extract_slice %w[0] [6] [1] : tensor<12xf32> to tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %new:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %m, %g : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) outs(%e, %e : tensor<6xf32>, tensor<6xf32>) {
  ^bb0(%wi: f32, %mi: f32, %gi: f32, %o0: f32, %o1: f32):
    %m2 = arith.addf %mi, %gi : f32
    %w2 = arith.subf %wi, %m2 : f32
    linalg.yield %w2, %m2 : f32, f32
  } -> (tensor<6xf32>, tensor<6xf32>)
  %sum = zero.all_reduce %new#1 on @dp reduce = sum : tensor<6xf32>
  %all = zero.all_gather %new#0 on @dp : tensor<6xf32> -> tensor<12xf32>
  %read = arith.mulf %w, %w : tensor<12xf32>
  return %all, %sum, %read : tensor<12xf32>, tensor<6xf32>, tensor<12xf32>
}

// -----

// The same, but the new weight is read before the old one's last read:
// the gather stays before that use of it.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @new_read_before_old
// CHECK: %[[ALL:.*]] = zero.all_gather
// CHECK-NEXT: arith.addf %[[ALL]], %[[ALL]]
// CHECK-NEXT: arith.mulf
func.func @new_read_before_old(%w: tensor<12xf32>, %shard: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<12xf32>, tensor<12xf32>) {
  %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
  %twice = arith.addf %all, %all : tensor<12xf32>
  %read = arith.mulf %w, %w : tensor<12xf32>
  return %all, %twice, %read : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>
}

// -----

// A weight gathered on its own in flight (zero-schedule-overlap: started
// once its shard is made, awaited before the return): the awaited value is
// copied into the argument just after the await, and
// zero-forward-collective-outputs then has the gather write there, in
// place. The gather stays where the schedule started it, ahead of the work
// that does not read the weight.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @awaited_gather
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[READ:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather
// CHECK: arith.addf
// CHECK-NEXT: %[[ALL:.*]] = zero.await %[[F]]
// CHECK-NEXT: %[[DEST:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1]]
// CHECK-NEXT: %[[COPY:.*]] = bufferization.materialize_in_destination %[[ALL]] in %[[DEST]]
// CHECK-NEXT: %[[NEW:.*]] = tensor.expand_shape %[[COPY]] {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK: return %[[NEW]], %[[READ]]
func.func @awaited_gather(%w: tensor<4x3xf32>, %shard: tensor<6xf32>, %x: tensor<8xf32>)
    -> (tensor<4x3xf32> {zero.state_of = 0 : i64}, tensor<4x3xf32>) {
  %read = arith.mulf %w, %w : tensor<4x3xf32>
  %f = zero.async : !zero.future<tensor<12xf32>> {
    %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
    zero.yield %all : tensor<12xf32>
  }
  %later = arith.addf %x, %x : tensor<8xf32>
  %all = zero.await %f reads %shard : !zero.future<tensor<12xf32>>, tensor<6xf32>
  %w2 = tensor.expand_shape %all [[0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
  return %w2, %read : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// The same, but the old weight is read after the gather starts (a tied
// weight, read again by a later layer): the start moves down to just after
// that read, where the old value is dead, so that the gather can write
// into the argument; the work after the read still overlaps it.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @awaited_gather_after_read
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<12xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[READ:.*]] = arith.mulf %[[W]], %[[W]]
// CHECK-NEXT: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather
// CHECK-NEXT: zero.yield
// CHECK-NEXT: }
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[ALL:.*]] = zero.await %[[F]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[ALL]] in %[[W]]
func.func @awaited_gather_after_read(%w: tensor<12xf32>, %shard: tensor<6xf32>, %x: tensor<8xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<12xf32>) {
  %f = zero.async : !zero.future<tensor<12xf32>> {
    %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
    zero.yield %all : tensor<12xf32>
  }
  %read = arith.mulf %w, %w : tensor<12xf32>
  %later = arith.addf %x, %x : tensor<8xf32>
  %all = zero.await %f reads %shard : !zero.future<tensor<12xf32>>, tensor<6xf32>
  return %all, %read : tensor<12xf32>, tensor<12xf32>
}

// -----

// The old weight is read after the await too: the gather's start moves
// past the read before the await, and the copy follows the read after it
// (zero-forward-collective-outputs then leaves the gather its own buffer:
// the argument is read while it is in flight).
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @awaited_gather_read_after
// CHECK: %[[READ:.*]] = arith.mulf
// CHECK-NEXT: %[[F:.*]] = zero.async
// CHECK: %[[ALL:.*]] = zero.await %[[F]]
// CHECK-NEXT: %[[LAST:.*]] = arith.subf
// CHECK-NEXT: bufferization.materialize_in_destination %[[ALL]] in
// CHECK: return
func.func @awaited_gather_read_after(%w: tensor<12xf32>, %shard: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<12xf32>, tensor<12xf32>) {
  %f = zero.async : !zero.future<tensor<12xf32>> {
    %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
    zero.yield %all : tensor<12xf32>
  }
  %read = arith.mulf %w, %w : tensor<12xf32>
  %all = zero.await %f reads %shard : !zero.future<tensor<12xf32>>, tensor<6xf32>
  %last = arith.subf %all, %w : tensor<12xf32>
  return %all, %read, %last : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>
}

// -----

// A bucket gathered in flight and awaited early (zero-schedule-overlap
// awaits it where it is done): the slices that cut its members out move up
// to the await, and each member is copied into its argument there, so the
// gathered bucket is freed before the rest of the step.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @awaited_bucket
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<4xf32> {zero.aliasing_output = 0 : i64}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<4xf32> {zero.aliasing_output = 1 : i64}
// CHECK: %[[ALL:.*]] = zero.await
// CHECK-NEXT: %[[SA:.*]] = tensor.extract_slice %[[ALL]][0] [4] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SA]] in %[[A]]
// CHECK-NEXT: %[[SB:.*]] = tensor.extract_slice %[[ALL]][4] [4] [1]
// CHECK-NEXT: bufferization.materialize_in_destination %[[SB]] in %[[B]]
// CHECK-NEXT: arith.addf
func.func @awaited_bucket(%a: tensor<4xf32>, %b: tensor<4xf32>, %shard: tensor<4xf32>, %x: tensor<6xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64}, tensor<4xf32> {zero.state_of = 1 : i64}) {
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %all = zero.all_gather %shard on @dp : tensor<4xf32> -> tensor<8xf32>
    zero.yield %all : tensor<8xf32>
  }
  %all = zero.await %f reads %shard : !zero.future<tensor<8xf32>>, tensor<4xf32>
  %later = arith.addf %x, %x : tensor<6xf32>
  %sa = tensor.extract_slice %all[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %sb = tensor.extract_slice %all[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %sa, %sb : tensor<4xf32>, tensor<4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A delayed update in flight: the update makes the new shard at the top,
// and the gather starts after the old weight's last read
// (zero-schedule-overlap). What makes the gather's input moves down to
// just before its start, so that the step does not hold the new shard
// through the read either.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_awaited_update_sinks
// CHECK: %[[READ:.*]] = arith.mulf
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: %[[NEW:.*]] = linalg.generic
// CHECK: %[[F:.*]] = zero.async
// CHECK-NEXT: zero.all_gather %[[NEW]]
// CHECK: %[[ALL:.*]] = zero.await %[[F]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[ALL]] in
func.func @delayed_awaited_update_sinks(%w: tensor<12xf32>, %g: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}, tensor<12xf32>) {
  %old = tensor.extract_slice %w[0] [6] [1] : tensor<12xf32> to tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %g : tensor<6xf32>, tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%wi: f32, %gi: f32, %o: f32):
    %w2 = arith.subf %wi, %gi : f32
    linalg.yield %w2 : f32
  } -> tensor<6xf32>
  %read = arith.mulf %w, %w : tensor<12xf32>
  %f = zero.async : !zero.future<tensor<12xf32>> {
    %all = zero.all_gather %new on @dp : tensor<6xf32> -> tensor<12xf32>
    zero.yield %all : tensor<12xf32>
  }
  %all = zero.await %f reads %new : !zero.future<tensor<12xf32>>, tensor<6xf32>
  return %all, %read : tensor<12xf32>, tensor<12xf32>
}

// -----

// A delayed update's gradient shard reduced in flight (awaited before the
// return): copied into its argument like a synchronous one, so that
// zero-forward-collective-outputs has the reduce-scatter write there and
// the step holds no second buffer of shards.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @awaited_reduce_scatter
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<6xf32> {zero.aliasing_output = 0 : i64}
// CHECK: %[[R:.*]] = zero.await
// CHECK-NEXT: bufferization.materialize_in_destination %[[R]] in %[[S]]
func.func @awaited_reduce_scatter(%s: tensor<6xf32>, %g: tensor<12xf32>)
    -> (tensor<6xf32> {zero.state_of = 0 : i64}) {
  %f = zero.async : !zero.future<tensor<6xf32>> {
    %r = zero.reduce_scatter %g on @dp reduce = sum : tensor<12xf32> -> tensor<6xf32>
    zero.yield %r : tensor<6xf32>
  }
  %r = zero.await %f reads %g : !zero.future<tensor<6xf32>>, tensor<12xf32>
  return %r : tensor<6xf32>
}

// -----

// The same, its argument in host memory: the queue's update may still
// read the old shard there, so it keeps its buffer, with the reason
// (zero-offload-to-host sends it down on the rank's host queue).
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @host_awaited_reduce_scatter
// CHECK-NOT: zero.aliasing_output
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is an awaited reduce-scatter's result, and its argument lives in host memory}}
func.func @host_awaited_reduce_scatter(%s: tensor<6xf32> {zero.memory = "host"}, %g: tensor<12xf32>)
    -> (tensor<6xf32> {zero.state_of = 0 : i64}) {
  %f = zero.async : !zero.future<tensor<6xf32>> {
    %r = zero.reduce_scatter %g on @dp reduce = sum : tensor<12xf32> -> tensor<6xf32>
    zero.yield %r : tensor<6xf32>
  }
  %r = zero.await %f reads %g : !zero.future<tensor<6xf32>>, tensor<12xf32>
  return %r : tensor<6xf32>
}

// -----

// A weight all-gathered on its own, in host memory (offload=params): the
// gather's result is copied into the argument all the same (zero-offload-to-host
// moves the gather through a device buffer of its own, copied back into
// the argument once done), so that the step allocates no pinned memory
// for the new weight.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @host_gathered_alone
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<12xf32> {zero.aliasing_output = 0 : i64, zero.memory = "host"}
// CHECK: %[[ALL:.*]] = zero.all_gather
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[ALL]] in %[[W]]
// CHECK: return %[[COPY]]
func.func @host_gathered_alone(%w: tensor<12xf32> {zero.memory = "host"}, %shard: tensor<6xf32>)
    -> (tensor<12xf32> {zero.state_of = 0 : i64}) {
  %all = zero.all_gather %shard on @dp : tensor<6xf32> -> tensor<12xf32>
  return %all : tensor<12xf32>
}

// -----

// A padded gather's slice, whose argument lives in host memory
// (offload=params): a gathered weight, copied into its argument too.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @host_slice
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<7xf32> {zero.aliasing_output = 0 : i64, zero.memory = "host"}
// CHECK: %[[ALL:.*]] = zero.all_gather
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[ALL]][0] [7] [1]
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[SLICE]] in %[[W]]
// CHECK: return %[[COPY]]
func.func @host_slice(%w: tensor<7xf32> {zero.memory = "host"}, %shard: tensor<2xf32>)
    -> (tensor<7xf32> {zero.state_of = 0 : i64}) {
  %all = zero.all_gather %shard on @dp : tensor<2xf32> -> tensor<8xf32>
  %w2 = tensor.extract_slice %all[0] [7] [1] : tensor<8xf32> to tensor<7xf32>
  return %w2 : tensor<7xf32>
}

// -----

// A delayed update's gradient shard (zero-delay-update): the step's
// reduce-scatter makes the next value of the argument the update read.
// It is copied into that argument, after the update's read of the old
// value, rather than returned in a buffer of its own every step.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @reduced_alone
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4xf32> {zero.aliasing_output = 1 : i64}
// CHECK: %[[NEW:.*]] = arith.subf %{{.*}}, %[[G]]
// CHECK: %[[RS:.*]] = zero.reduce_scatter
// CHECK: %[[COPY:.*]] = bufferization.materialize_in_destination %[[RS]] in %[[G]]
// CHECK: return %[[NEW]], %[[COPY]]
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is made by 'arith.subf', not by a linalg op with a destination}}
func.func @reduced_alone(%w: tensor<4xf32>, %g: tensor<4xf32>, %grad: tensor<16xf32>)
    -> (tensor<4xf32>, tensor<4xf32> {zero.state_of = 1 : i64}) {
  %new = arith.subf %w, %g : tensor<4xf32>
  %shard = zero.reduce_scatter %grad on @dp reduce = sum : tensor<16xf32> -> tensor<4xf32>
  return %new, %shard : tensor<4xf32>, tensor<4xf32>
}

// -----

// The same with the argument in host memory (offload): the queue's update
// may still read the old value there, so the shard keeps a buffer of its
// own, which zero-offload-to-host sends down on the rank's host queue.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @host_reduced_alone
// CHECK-NOT: materialize_in_destination
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is a reduce-scatter's result, and its argument lives in host memory}}
func.func @host_reduced_alone(%g: tensor<4xf32> {zero.memory = "host"}, %grad: tensor<16xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64}) {
  %shard = zero.reduce_scatter %grad on @dp reduce = sum : tensor<16xf32> -> tensor<4xf32>
  return %shard : tensor<4xf32>
}

// -----

// A slice of what the step reduces (a delayed update's gradient shard, its
// bucket's part) as the next value of a host argument: the queue's update
// may still read the argument's old value, so zero-offload-to-host sends
// the slice down on the rank's host queue into pinned memory of its own,
// and it keeps that buffer.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @host_reduced_slice
// CHECK-NOT: zero.aliasing_output
// CHECK-NOT: materialize_in_destination
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is a slice, and its argument lives in host memory}}
func.func @host_reduced_slice(%g: tensor<3xf32> {zero.memory = "host"}, %bucket: tensor<16xf32>)
    -> (tensor<3xf32> {zero.state_of = 0 : i64}) {
  %shard = zero.reduce_scatter %bucket on @dp reduce = sum : tensor<16xf32> -> tensor<4xf32>
  %g2 = tensor.extract_slice %shard[1] [3] [1] : tensor<4xf32> to tensor<3xf32>
  return %g2 : tensor<3xf32>
}

// -----

// A loop that starts from a shard of the argument updates it in place;
// writing the gathered result into the argument too would make One-Shot
// Bufferize copy the whole argument before the loop, so the slice keeps a
// buffer of its own.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @loop_starts_from_argument
// CHECK-NOT: zero.aliasing_output
// CHECK-NOT: materialize_in_destination
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is a slice, and a loop starts from its argument}}
func.func @loop_starts_from_argument(%m: tensor<2x4xf32>, %g: tensor<2xf32>)
    -> (tensor<2x4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %flat = tensor.collapse_shape %m [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %shard = zero.shard_slice %flat on @dp : tensor<8xf32> -> tensor<2xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %shard) -> tensor<2xf32> {
    %n = arith.addf %s, %g : tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  // The bucket: the shard and one padding element, gathered rank-major.
  %pad = arith.constant dense<0.0> : tensor<1xf32>
  %bucket = tensor.concat dim(0) %r, %pad : (tensor<2xf32>, tensor<1xf32>) -> tensor<3xf32>
  %all = zero.all_gather %bucket on @dp : tensor<3xf32> -> tensor<12xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [4, 3] : tensor<12xf32> into tensor<4x3xf32>
  %part = tensor.extract_slice %rows[0, 0] [4, 2] [1, 1] : tensor<4x3xf32> to tensor<4x2xf32>
  %m2 = tensor.collapse_shape %part [[0, 1]] : tensor<4x2xf32> into tensor<8xf32>
  %m3 = tensor.expand_shape %m2 [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  return %m3 : tensor<2x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A training loop that starts from its arguments: the fused update in the
// body writes each next value into the iteration argument it replaces (no
// second buffer a value), and the arguments are donated to the loop's
// results, which then are the arguments' buffers.
// CHECK-LABEL: func.func @loop_carries_in_place
// CHECK-SAME: (%[[W:[^:]+]]: tensor<8xf32> {zero.aliasing_output = 0 : i64}, %[[M:[^:]+]]: tensor<8xf32> {zero.aliasing_output = 1 : i64}, %{{.*}}: tensor<8xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[LW:.*]] = %[[W]], %[[LM:.*]] = %[[M]])
// CHECK: linalg.generic {{.*}} outs(%[[LW]], %[[LM]] : tensor<8xf32>, tensor<8xf32>)
func.func @loop_carries_in_place(%w: tensor<8xf32>, %m: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64}, tensor<8xf32> {zero.state_of = 1 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%lw = %w, %lm = %m)
      -> (tensor<8xf32>, tensor<8xf32>) {
    %e0 = tensor.empty() : tensor<8xf32>
    %e1 = tensor.empty() : tensor<8xf32>
    %n:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
        ins(%lw, %lm, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        outs(%e0, %e1 : tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%wi: f32, %mi: f32, %gi: f32, %o0: f32, %o1: f32):
      %m2 = arith.addf %mi, %gi : f32
      %w2 = arith.subf %wi, %m2 : f32
      linalg.yield %w2, %m2 : f32, f32
    } -> (tensor<8xf32>, tensor<8xf32>)
    scf.yield %n#0, %n#1 : tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// The body reads the old momentum after the update (a statistic of it):
// written in place it would be gone, so it gets a buffer of its own, and
// its argument is not donated. The weight is carried in place. A moment
// the loop starts from zeros is carried in place, but its result is not
// its argument's buffer.
// CHECK-LABEL: func.func @loop_keeps_what_it_reads
// CHECK-SAME: (%[[W:[^:]+]]: tensor<8xf32> {zero.aliasing_output = 0 : i64}, %[[M:[^:]+]]: tensor<8xf32>, %[[V:[^:]+]]: tensor<8xf32>, %{{.*}}: tensor<8xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[LW:.*]] = %[[W]], %[[LM:.*]] = %[[M]], %[[LV:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: linalg.generic {{.*}} outs(%[[LW]], %{{.*}}, %[[LV]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// expected-remark @+2 {{zero-donate-state: result 1 (the next value of argument 1) keeps a buffer of its own: a loop makes it, and the next value in each iteration is not made in place (no linalg op that writes it without reading its destination, or the old value is read after)}}
// expected-remark @+1 {{zero-donate-state: result 2 (the next value of argument 2) keeps a buffer of its own: a loop makes it, from a value other than its argument}}
func.func @loop_keeps_what_it_reads(%w: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64}, tensor<8xf32> {zero.state_of = 1 : i64},
        tensor<8xf32> {zero.state_of = 2 : i64}, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(%lw = %w, %lm = %m, %lv = %zero, %s = %zero)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %e0 = tensor.empty() : tensor<8xf32>
    %e1 = tensor.empty() : tensor<8xf32>
    %e2 = tensor.empty() : tensor<8xf32>
    %n:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id, #id], iterator_types = ["parallel"]}
        ins(%lw, %lm, %lv, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        outs(%e0, %e1, %e2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%wi: f32, %mi: f32, %vi: f32, %gi: f32, %o0: f32, %o1: f32, %o2: f32):
      %m2 = arith.addf %mi, %gi : f32
      %v2 = arith.addf %vi, %gi : f32
      %d = arith.addf %m2, %v2 : f32
      %w2 = arith.subf %wi, %d : f32
      linalg.yield %w2, %m2, %v2 : f32, f32, f32
    } -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
    %s2 = arith.addf %s, %lm : tensor<8xf32>
    scf.yield %n#0, %n#1, %n#2, %s2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A loop that carries a weight's gathered copy (defer-all-gather: the next
// iteration's copy is this rank's part of a gathered bucket, a strided
// slice): the slice is copied into the iteration argument at the end of the
// iteration, when the old copy has been read, rather than into a buffer of
// its own.
zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @loop_copies_slice_in_place
// CHECK: scf.for {{.*}} iter_args(%[[C:.*]] = %{{.*}}) -> (tensor<2x4xbf16>)
// CHECK: %[[PART:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 2] [1, 1] : tensor<4x3xbf16> to tensor<4x2xbf16>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1]] : tensor<2x4xbf16> into tensor<8xbf16>
// CHECK: %[[DEST:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 2] : tensor<8xbf16> into tensor<4x2xbf16>
// CHECK: %[[NEW:.*]] = bufferization.materialize_in_destination %[[PART]] in %[[DEST]]
// CHECK: %[[NEW2:.*]] = tensor.collapse_shape %[[NEW]]
// CHECK: %[[NEW3:.*]] = tensor.expand_shape %[[NEW2]]
// CHECK: scf.yield %[[NEW3]] : tensor<2x4xbf16>
func.func @loop_copies_slice_in_place(%copy: tensor<2x4xbf16>, %shard: tensor<2xbf16>,
                                      %x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%c = %copy) -> tensor<2x4xbf16> {
    %y = arith.mulf %c, %x : tensor<2x4xbf16>
    %pad = arith.constant dense<0.0> : tensor<1xbf16>
    %bucket = tensor.concat dim(0) %shard, %pad : (tensor<2xbf16>, tensor<1xbf16>) -> tensor<3xbf16>
    %all = zero.all_gather %bucket on @dp : tensor<3xbf16> -> tensor<12xbf16>
    %rows = tensor.expand_shape %all [[0, 1]] output_shape [4, 3] : tensor<12xbf16> into tensor<4x3xbf16>
    %part = tensor.extract_slice %rows[0, 0] [4, 2] [1, 1] : tensor<4x3xbf16> to tensor<4x2xbf16>
    %flat = tensor.collapse_shape %part [[0, 1]] : tensor<4x2xbf16> into tensor<8xbf16>
    %next = tensor.expand_shape %flat [[0, 1]] output_shape [2, 4] : tensor<8xbf16> into tensor<2x4xbf16>
    scf.yield %next : tensor<2x4xbf16>
  }
  return %r : tensor<2x4xbf16>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A loop that carries state in host memory (zero-offload-state's
// zero.host_iter_args) carries it in place only where it starts it from an
// argument in host memory: folded away once bufferized
// (zero-fold-in-place-iter-args), the iteration argument leaves nothing to
// place the buffer by, so the buffer must be there already. Here the
// momentum starts on the host and is carried in place; the second state
// starts on the device and keeps two buffers, which zero-offload-to-host
// places in host memory.
// CHECK-LABEL: func.func @host_loop
// CHECK-SAME: (%[[M:[^:]+]]: tensor<8xf32> {zero.aliasing_output = 0 : i64, zero.memory = "host"}, %[[N:[^:]+]]: tensor<8xf32>, %{{.*}}: tensor<8xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[LM:.*]] = %[[M]], %[[LN:.*]] = %[[N]])
// CHECK: outs(%[[LM]] : tensor<8xf32>)
// CHECK: outs(%{{.*}} : tensor<8xf32>)
// expected-remark @+1 {{zero-donate-state: result 1 (the next value of argument 1) keeps a buffer of its own: a loop makes it, and the next value in each iteration is not made in place}}
func.func @host_loop(%m: tensor<8xf32> {zero.memory = "host"}, %n: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64}, tensor<8xf32> {zero.state_of = 1 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%lm = %m, %ln = %n) -> (tensor<8xf32>, tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %m2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%lm, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%mi: f32, %gi: f32, %o: f32):
      %s = arith.addf %mi, %gi : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %f = tensor.empty() : tensor<8xf32>
    %n2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%ln, %g : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
    ^bb0(%ni: f32, %gi: f32, %o: f32):
      %s = arith.mulf %ni, %gi : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %m2, %n2 : tensor<8xf32>, tensor<8xf32>
  } {zero.host_iter_args = array<i64: 0, 1>}
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// No state, nothing to do.
// CHECK-LABEL: func.func @no_state
// CHECK-NOT: zero.aliasing_output
func.func @no_state(%x: tensor<8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}
