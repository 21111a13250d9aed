// zero-delay-update: the update reads what the step before computed from
// its data (the reduced gradient shard; a gather of it joins the update, so
// that the shard, not the whole, is kept), from a new argument that starts
// at zero and whose next value the step returns; a flag that starts at zero
// keeps every state result at its argument in the first step.
// Hyperparameters (a scalar argument, its broadcast) are read as of the
// step that runs the update, and the update moves to the start of the
// step, ahead of the forward and backward passes it no longer waits for.
// Functions it cannot rewrite say why.
// RUN: zero-opt %s --split-input-file --zero-delay-update --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @momentum
// CHECK-SAME: (%[[W:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[LR:.*]]: f32,
// CHECK-SAME: %[[PENDING:.*]]: tensor<4xf32> {zero.delayed, zero.shard = #zero.shard<@dp, axes = [0], tensor<2x4xf32>>, zero.starts_at_zero},
// CHECK-SAME: %[[FLAG:.*]]: tensor<1xf32> {zero.delayed, zero.shard = #zero.shard<@dp, axes = [0], tensor<2x1xf32>>, zero.starts_at_zero})
// CHECK-SAME: -> (tensor<8xf32> {zero.state_of = 0 : i64}, tensor<8xf32> {zero.state_of = 1 : i64},
// CHECK-SAME: tensor<4xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<2x4xf32>>, zero.state_of = 4 : i64},
// CHECK-SAME: tensor<1xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<2x1xf32>>, zero.state_of = 5 : i64})
// The update reads the step before's and runs first, before anything of
// this step. Each state's new value is kept at the old one in the first
// step where it is made, and read so: the moment's select follows its
// producer, and the weight's update reads it (one reader each, so that they
// fuse into one loop).
// CHECK: %[[SET:.*]] = tensor.extract %[[FLAG]]
// CHECK: %[[APPLIES:.*]] = arith.cmpf one, %[[SET]]
// CHECK: %[[WHOLE:.*]] = zero.all_gather %[[PENDING]]
// CHECK-NEXT: %[[MB:.*]] = arith.mulf %[[M]]
// CHECK-NEXT: %[[M2:.*]] = arith.addf %[[MB]], %[[WHOLE]]
// CHECK-NEXT: %[[C2:.*]] = tensor.splat %[[APPLIES]] : tensor<8xi1>
// CHECK-NEXT: %[[M3:.*]] = arith.select %[[C2]], %[[M2]], %[[M]]
// CHECK-NEXT: %[[LRS:.*]] = tensor.splat %[[LR]]
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[M3]], %[[LRS]]
// CHECK-NEXT: %[[W2:.*]] = arith.subf %[[W]], %[[S]]
// This step's gradient is reduced, and only returned.
// CHECK: %[[R:.*]] = zero.reduce_scatter %[[G]]
// CHECK: %[[C1:.*]] = tensor.splat %[[APPLIES]] : tensor<8xi1>
// CHECK: %[[W3:.*]] = arith.select %[[C1]], %[[W2]], %[[W]]
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK: return %[[W3]], %[[M3]], %[[R]], %[[ONE]]
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @momentum updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @momentum(%w: tensor<8xf32>, %m: tensor<8xf32>, %g: tensor<8xf32>, %lr: f32)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %b = arith.constant dense<0.9> : tensor<8xf32>
  %r = zero.reduce_scatter %g on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %rr = zero.all_gather %r on @dp : tensor<4xf32> -> tensor<8xf32>
  %mb = arith.mulf %m, %b : tensor<8xf32>
  %m2 = arith.addf %mb, %rr : tensor<8xf32>
  %lrs = tensor.splat %lr : tensor<8xf32>
  %s = arith.mulf %m2, %lrs : tensor<8xf32>
  %w2 = arith.subf %w, %s : tensor<8xf32>
  return %w2, %m2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A scalar computed from the gradients (a clipping coefficient) is delayed
// with them: here the coefficient, which the step also returns (so it is
// this step's there), kept as a tensor of one element. A 2-D gradient is
// kept flat.
// CHECK-LABEL: func.func @clipped
// CHECK-SAME: %[[PG:[^:]*]]: tensor<12xf32> {zero.delayed, zero.shard = #zero.shard<@dp, axes = [0], tensor<2x12xf32>>, zero.starts_at_zero}
// CHECK-SAME: %[[PS:[^:]*]]: tensor<1xf32> {zero.delayed, zero.shard = #zero.shard<@dp, axes = [0], tensor<2x1xf32>>, zero.starts_at_zero}
// CHECK-SAME: %{{[^:]*}}: tensor<1xf32> {{.*}}zero.starts_at_zero
// CHECK: %[[SCALE:.*]] = tensor.extract %[[PS]]
// CHECK: %[[GRAD:.*]] = tensor.expand_shape %[[PG]] {{\[}}[0, 1]] output_shape [3, 4] : tensor<12xf32> into tensor<3x4xf32>
// CHECK: %[[SS:.*]] = tensor.splat %[[SCALE]]
// CHECK: arith.mulf %[[GRAD]], %[[SS]]
// CHECK: %[[R:.*]] = zero.all_reduce
// CHECK: %[[NOW:.*]] = math.sqrt
// CHECK: %[[NEXT_GRAD:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[NEXT_SCALE:.*]] = tensor.from_elements %[[NOW]] : tensor<1xf32>
// CHECK: return %{{.*}}, %[[NOW]], %[[NEXT_GRAD]], %[[NEXT_SCALE]], %{{.*}} :
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @clipped updates its state from 2 value(s) of the step before (the first step updates nothing)}}
func.func @clipped(%w: tensor<3x4xf32>, %g: tensor<3x4xf32>, %n: tensor<1xf32>)
    -> (tensor<3x4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<3x4xf32>
  %nr = zero.all_reduce %n on @dp reduce = sum : tensor<1xf32>
  %norm = tensor.extract %nr[%c0] : tensor<1xf32>
  %scale = math.sqrt %norm : f32
  %ss = tensor.splat %scale : tensor<3x4xf32>
  %c = arith.mulf %r, %ss : tensor<3x4xf32>
  %w2 = arith.subf %w, %c : tensor<3x4xf32>
  return %w2, %scale : tensor<3x4xf32>, f32
}

// -----

// State that starts at zero (an error-feedback residual) is its exchange's,
// not the model's: the exchange and the residual's next value stay this
// step's, and only what the update reads of the exchange is delayed.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[W:[^:]*]]: tensor<4xf32>, %[[G:[^:]*]]: tensor<4xf32>, %[[R:[^:]*]]: tensor<4xf32> {zero.starts_at_zero}, %[[PENDING:[^:]*]]: tensor<4xf32> {zero.delayed
// CHECK: %[[W2:.*]] = arith.subf %[[W]], %[[PENDING]]
// CHECK: %[[X:.*]] = arith.addf %[[G]], %[[R]]
// CHECK: %[[S:.*]] = zero.all_reduce %[[X]]
// CHECK: %[[LOST:.*]] = arith.subf %[[X]], %[[S]]
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[W2]], %[[W]]
// CHECK: return %[[KEPT]], %[[LOST]], %[[S]], %{{.*}} :
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @residual updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @residual(%w: tensor<4xf32>, %g: tensor<4xf32>,
                    %r: tensor<4xf32> {zero.starts_at_zero})
    -> (tensor<4xf32>, tensor<4xf32> {zero.state_of = 2 : i64}) {
  %x = arith.addf %g, %r : tensor<4xf32>
  %s = zero.all_reduce %x on @dp reduce = mean : tensor<4xf32>
  %lost = arith.subf %x, %s : tensor<4xf32>
  %w2 = arith.subf %w, %s : tensor<4xf32>
  return %w2, %lost : tensor<4xf32>, tensor<4xf32>
}

// -----

// A whole weight updated on its shard and gathered back: step 0 keeps the
// shard's old value where the update makes the new one (in its loop),
// not with a pass of its own over the gathered whole.
// CHECK-LABEL: func.func @gathered
// CHECK: %[[OLD:.*]] = zero.shard_slice %arg0
// CHECK: %[[NEW:.*]] = arith.subf %[[OLD]], %{{.*}} : tensor<4xf32>
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[NEW]], %[[OLD]] : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[WHOLE:.*]] = zero.all_gather %[[KEPT]]
// CHECK-NOT: arith.select
// CHECK: return %[[WHOLE]],
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @gathered updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @gathered(%w: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64}) {
  %r = zero.reduce_scatter %g on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %ws = zero.shard_slice %w on @dp : tensor<8xf32> -> tensor<4xf32>
  %w2 = arith.subf %ws, %r : tensor<4xf32>
  %whole = zero.all_gather %w2 on @dp : tensor<4xf32> -> tensor<8xf32>
  return %whole : tensor<8xf32>
}

// -----

// A moment updated on its shard and gathered back, made from its old value
// through an elementwise op of its shape (b * m + g): step 0 keeps the
// shard's old value where the update makes the new one, not with a pass
// of its own over the gathered whole.
// CHECK-LABEL: func.func @gathered_moment
// CHECK: %[[OLD:.*]] = zero.shard_slice %arg0
// CHECK: %[[DECAYED:.*]] = arith.mulf %[[OLD]], %{{.*}} : tensor<4xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[DECAYED]], %{{.*}} : tensor<4xf32>
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[NEW]], %[[OLD]] : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[WHOLE:.*]] = zero.all_gather %[[KEPT]]
// CHECK-NOT: arith.select
// CHECK: return %[[WHOLE]],
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @gathered_moment updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @gathered_moment(%m: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64}) {
  %b = arith.constant dense<0.9> : tensor<4xf32>
  %r = zero.reduce_scatter %g on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %ms = zero.shard_slice %m on @dp : tensor<8xf32> -> tensor<4xf32>
  %mb = arith.mulf %ms, %b : tensor<4xf32>
  %m2 = arith.addf %mb, %r : tensor<4xf32>
  %whole = zero.all_gather %m2 on @dp : tensor<4xf32> -> tensor<8xf32>
  return %whole : tensor<8xf32>
}

// -----

// Weights gathered in one bucket (their shards concatenated, the gather
// reshaped to [N][chunk] and each member sliced out; the bias padded to
// 6 and cut back to 5): step 0 keeps each shard's old value before the
// concatenation, in the update's loop, not with a pass of its own over each
// gathered whole.
// CHECK-LABEL: func.func @bucketed
// CHECK: %[[WOLD:.*]] = zero.shard_slice %arg0
// CHECK: %[[BOLD:.*]] = zero.shard_slice %{{.*}} : tensor<6xf32> -> tensor<3xf32>
// CHECK: %[[WNEW:.*]] = arith.subf %[[WOLD]], %{{.*}} : tensor<4xf32>
// CHECK: %[[WKEPT:.*]] = arith.select %{{.*}}, %[[WNEW]], %[[WOLD]] : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[BNEW:.*]] = arith.subf %[[BOLD]], %{{.*}} : tensor<3xf32>
// CHECK: %[[BKEPT:.*]] = arith.select %{{.*}}, %[[BNEW]], %[[BOLD]] : tensor<3xi1>, tensor<3xf32>
// CHECK: tensor.concat dim(0) %[[WKEPT]], %[[BKEPT]], %{{.*}} :
// CHECK: zero.all_gather
// CHECK-NOT: arith.select
// CHECK: return
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @bucketed updates its state from 2 value(s) of the step before (the first step updates nothing)}}
func.func @bucketed(%w: tensor<8xf32>, %b: tensor<5xf32>, %gw: tensor<8xf32>,
                    %gb: tensor<6xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64},
        tensor<5xf32> {zero.state_of = 1 : i64}) {
  %zero = arith.constant 0.0 : f32
  %rw = zero.reduce_scatter %gw on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %rb = zero.reduce_scatter %gb on @dp reduce = mean : tensor<6xf32> -> tensor<3xf32>
  %ws = zero.shard_slice %w on @dp : tensor<8xf32> -> tensor<4xf32>
  %bp = tensor.pad %b low[0] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<5xf32> to tensor<6xf32>
  %bs = zero.shard_slice %bp on @dp : tensor<6xf32> -> tensor<3xf32>
  %w2 = arith.subf %ws, %rw : tensor<4xf32>
  %b2 = arith.subf %bs, %rb : tensor<3xf32>
  %pad = arith.constant dense<0.0> : tensor<1xf32>
  %chunk = tensor.concat dim(0) %w2, %b2, %pad
      : (tensor<4xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<8xf32>
  %all = zero.all_gather %chunk on @dp : tensor<8xf32> -> tensor<16xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [2, 8]
      : tensor<16xf32> into tensor<2x8xf32>
  %wr = tensor.extract_slice %rows[0, 0] [2, 4] [1, 1]
      : tensor<2x8xf32> to tensor<2x4xf32>
  %wn = tensor.collapse_shape %wr [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %br = tensor.extract_slice %rows[0, 4] [2, 3] [1, 1]
      : tensor<2x8xf32> to tensor<2x3xf32>
  %bc = tensor.collapse_shape %br [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %bn = tensor.extract_slice %bc[0] [5] [1] : tensor<6xf32> to tensor<5xf32>
  return %wn, %bn : tensor<8xf32>, tensor<5xf32>
}

// -----

// A result sliced from a bucket across its members' bounds is no member's
// shard: step 0 keeps it with a select on the gathered whole.
// CHECK-LABEL: func.func @bucket_straddles
// CHECK: zero.all_gather
// CHECK: %[[ROWS:.*]] = tensor.expand_shape
// CHECK: %[[PART:.*]] = tensor.extract_slice %[[ROWS]][0, 2] [2, 4] [1, 1]
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %[[PART]]
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[WHOLE]], %arg0 : tensor<8xi1>, tensor<8xf32>
// CHECK: return %[[KEPT]],
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @bucket_straddles updates its state from 2 value(s) of the step before (the first step updates nothing)}}
func.func @bucket_straddles(%w: tensor<8xf32>, %v: tensor<8xf32>,
                            %gw: tensor<8xf32>, %gv: tensor<8xf32>)
    -> (tensor<8xf32> {zero.state_of = 0 : i64},
        tensor<8xf32> {zero.state_of = 1 : i64}) {
  %rw = zero.reduce_scatter %gw on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %rv = zero.reduce_scatter %gv on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %ws = zero.shard_slice %w on @dp : tensor<8xf32> -> tensor<4xf32>
  %vs = zero.shard_slice %v on @dp : tensor<8xf32> -> tensor<4xf32>
  %w2 = arith.subf %ws, %rw : tensor<4xf32>
  %v2 = arith.subf %vs, %rv : tensor<4xf32>
  %chunk = tensor.concat dim(0) %w2, %v2
      : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %all = zero.all_gather %chunk on @dp : tensor<8xf32> -> tensor<16xf32>
  %rows = tensor.expand_shape %all [[0, 1]] output_shape [2, 8]
      : tensor<16xf32> into tensor<2x8xf32>
  %wr = tensor.extract_slice %rows[0, 2] [2, 4] [1, 1]
      : tensor<2x8xf32> to tensor<2x4xf32>
  %wn = tensor.collapse_shape %wr [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %vr = tensor.extract_slice %rows[0, 4] [2, 4] [1, 1]
      : tensor<2x8xf32> to tensor<2x4xf32>
  %vn = tensor.collapse_shape %vr [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %wn, %vn : tensor<8xf32>, tensor<8xf32>
}

// -----

// No state: nothing to delay.
// expected-remark @below {{zero-delay-update: @no_state left as it is: no result is the next value of a tensor argument (state carried by a loop is outside what it covers)}}
func.func @no_state(%x: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

// An update from state and hyperparameters alone reads nothing to delay;
// the function is left as it was, unmarked.
// CHECK-LABEL: func.func @decay(%arg0: tensor<4xf32>, %arg1: f32) -> tensor<4xf32> {
// expected-remark @below {{zero-delay-update: @decay left as it is: its update reads nothing the step computes from its data}}
func.func @decay(%w: tensor<4xf32>, %lr: f32) -> tensor<4xf32> {
  %s = tensor.splat %lr : tensor<4xf32>
  %d = arith.mulf %w, %s : tensor<4xf32>
  %w2 = arith.subf %w, %d : tensor<4xf32>
  return %w2 : tensor<4xf32>
}

// -----

// What the update computes from the gradient is read outside it (here by a
// matmul): delaying it would change that reader's input.
zero.mesh @dp(shape = [2])
func.func @leak(%w: tensor<2x2xf32>, %g: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, f32) {
  %c0 = arith.constant 0 : index
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<2x2xf32>
  %w2 = arith.subf %w, %r : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  // expected-remark @below {{zero-delay-update: @leak left as it is: 'linalg.matmul' reads what the update computes from the step's data}}
  %p = linalg.matmul ins(%w2, %w2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %v = tensor.extract %p[%c0, %c0] : tensor<2x2xf32>
  return %w2, %v : tensor<2x2xf32>, f32
}

// -----

// A step that another function calls cannot take new arguments.
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @called left as it is: it is called in the module, so it cannot take and return the delayed values as state}}
func.func @called(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<4xf32>
  %w2 = arith.subf %w, %r : tensor<4xf32>
  return %w2 : tensor<4xf32>
}
// expected-remark @below {{zero-delay-update: @caller left as it is: no result is the next value of a tensor argument (state carried by a loop is outside what it covers)}}
func.func @caller(%w: tensor<4xf32>, %g: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %w2 = func.call @called(%w, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = tensor.extract %w2[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

#id = affine_map<(d0) -> (d0)>

// The same momentum step in linalg form (convert-elementwise-to-linalg):
// the linalg ops that only the update reads join it from below as their
// arith forms do (here the scaled gradient), so the update keeps the
// reduced gradient's shard, not what the step computes from it; and the
// flag keeps the weight at the update's op on the shard, before its
// gather, not at the whole weight after it.
// CHECK-LABEL: func.func @momentum_linalg
// CHECK-SAME: %[[PENDING:[a-z0-9]+]]: tensor<4xf32> {zero.delayed, zero.shard = #zero.shard<@dp, axes = [0], tensor<2x4xf32>>, zero.starts_at_zero}
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[PENDING]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[OLD:[a-z0-9_]+]], %[[SCALED]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[NEW]], %[[OLD]] : tensor<4xi1>, tensor<4xf32>
// CHECK-NEXT: zero.all_gather %[[KEPT]]
// CHECK-NOT: arith.select
// CHECK: zero.reduce_scatter
// CHECK-NOT: arith.select {{.*}} tensor<8xf32>
// CHECK: return
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @momentum_linalg updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @momentum_linalg(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %lr = arith.constant dense<0.1> : tensor<4xf32>
  %r = zero.reduce_scatter %g on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%r, %lr : tensor<4xf32>, tensor<4xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %old = zero.shard_slice %w on @dp : tensor<8xf32> -> tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%old, %scaled : tensor<4xf32>, tensor<4xf32>) outs(%old : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %w2 = zero.all_gather %new on @dp : tensor<4xf32> -> tensor<8xf32>
  return %w2 : tensor<8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>

// In linalg form the flag keeps the weight at the shard only where the op
// reads the old shard at the element it writes: here it reads it
// transposed, so the select follows the gathered whole instead.
// CHECK-LABEL: func.func @transposed_linalg
// CHECK: %[[NEW:.*]] = linalg.generic
// CHECK-NEXT: ^bb0
// CHECK: %[[ALL:.*]] = zero.all_gather %[[NEW]]
// CHECK: %[[KEPT:.*]] = arith.select %{{.*}}, %[[ALL]], %{{.*}} : tensor<8x4xi1>, tensor<8x4xf32>
// CHECK: return %[[KEPT]]
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-delay-update: @transposed_linalg updates its state from 1 value(s) of the step before (the first step updates nothing)}}
func.func @transposed_linalg(%w: tensor<8x4xf32>, %g: tensor<8x4xf32>)
    -> (tensor<8x4xf32> {zero.state_of = 0 : i64}) {
  %r = zero.reduce_scatter %g on @dp reduce = mean : tensor<8x4xf32> -> tensor<4x4xf32>
  %old = zero.shard_slice %w on @dp : tensor<8x4xf32> -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %new = linalg.generic {indexing_maps = [#tr2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%old, %r : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4x4xf32>
  %w2 = zero.all_gather %new on @dp : tensor<4x4xf32> -> tensor<8x4xf32>
  return %w2 : tensor<8x4xf32>
}
