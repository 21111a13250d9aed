// zero-offload-state: which state arguments live in pinned host memory
// beside a GPU. offload=optimizer marks the state only the update reads (the
// moments; a weight the forward pass reads stays on the device, with a
// remark naming the reader); offload=params marks every state argument;
// offload=none marks nothing. Functions with nothing to move say why.
// RUN: zero-opt %s --split-input-file --zero-offload-state=offload=optimizer --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-offload-state=offload=params | FileCheck %s --check-prefix=PARAMS
// RUN: zero-opt %s --split-input-file --zero-offload-state=offload=none | FileCheck %s --check-prefix=NONE

// A sharded momentum step with a forward pass: the weight feeds a matmul,
// the moment only the update.
// CHECK-LABEL: func.func @forward_reads_weight
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xf32>)
// PARAMS-LABEL: func.func @forward_reads_weight
// PARAMS-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xf32>)
// NONE-NOT: zero.memory
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 1 of 2 state arguments of @forward_reads_weight in host memory}}
func.func @forward_reads_weight(%w: tensor<4x4xf32>, %m: tensor<8xf32>,
                                %x: tensor<2x4xf32>)
    -> (tensor<4x4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-remark @below {{zero-offload-state: argument 0 of @forward_reads_weight stays on the device: 'linalg.matmul' reads it outside the update}}
  %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %g = zero.reduce_scatter %flat on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %ms = zero.shard_slice %m on @dp : tensor<8xf32> -> tensor<4xf32>
  %b = arith.constant dense<0.9> : tensor<4xf32>
  %mb = arith.mulf %ms, %b : tensor<4xf32>
  %m2s = arith.addf %mb, %g : tensor<4xf32>
  %m2 = zero.all_gather %m2s on @dp : tensor<4xf32> -> tensor<8xf32>
  %wf = tensor.collapse_shape %w [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %ws = zero.shard_slice %wf on @dp : tensor<16xf32> -> tensor<8xf32>
  %w2s = arith.subf %ws, %m2 : tensor<8xf32>
  %w2f = zero.all_gather %w2s on @dp : tensor<8xf32> -> tensor<16xf32>
  %w2 = tensor.expand_shape %w2f [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %w2, %m2 : tensor<4x4xf32>, tensor<8xf32>
}

// -----

// Mixed precision: the forward pass reads a bf16 rounding of the weight
// (here in linalg form, as convert-elementwise-to-linalg writes
// arith.truncf), not the weight: the fp32 master goes to host memory with
// its moment, and the device reads the rounded copy.
// CHECK-LABEL: func.func @forward_reads_rounded_copy
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xbf16>)
// PARAMS-LABEL: func.func @forward_reads_rounded_copy
// PARAMS-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xbf16>)
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 2 of 2 state arguments of @forward_reads_rounded_copy in host memory}}
func.func @forward_reads_rounded_copy(%w: tensor<4x4xf32>, %m: tensor<8xf32>,
                                      %x: tensor<2x4xbf16>)
    -> (tensor<4x4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x4xbf16>
  %wb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x4xf32>) outs(%e16 : tensor<4x4xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x4xbf16>
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %wb : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
  %flat = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %g = zero.reduce_scatter %flat on @dp reduce = mean : tensor<8xf32> -> tensor<4xf32>
  %ms = zero.shard_slice %m on @dp : tensor<8xf32> -> tensor<4xf32>
  %b = arith.constant dense<0.9> : tensor<4xf32>
  %mb = arith.mulf %ms, %b : tensor<4xf32>
  %m2s = arith.addf %mb, %g : tensor<4xf32>
  %m2 = zero.all_gather %m2s on @dp : tensor<4xf32> -> tensor<8xf32>
  %wf = tensor.collapse_shape %w [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %ws = zero.shard_slice %wf on @dp : tensor<16xf32> -> tensor<8xf32>
  %w2s = arith.subf %ws, %m2 : tensor<8xf32>
  %w2f = zero.all_gather %w2s on @dp : tensor<8xf32> -> tensor<16xf32>
  %w2 = tensor.expand_shape %w2f [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %w2, %m2 : tensor<4x4xf32>, tensor<8xf32>
}

// -----

// An update alone (no forward pass), at a function boundary of shards:
// weight and moments are read only by the update, with a norm (a full
// reduction) on the way.
// CHECK-LABEL: func.func @update_alone
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32>)
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 2 of 2 state arguments of @update_alone in host memory}}
func.func @update_alone(%w: tensor<4xf32>, %m: tensor<4xf32>,
                        %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %b = arith.constant dense<0.9> : tensor<4xf32>
  %c = arith.constant dense<0.1> : tensor<4xf32>
  %gr = zero.all_reduce %g on @dp reduce = mean : tensor<4xf32>
  %mb = arith.mulf %m, %b : tensor<4xf32>
  %gc = arith.mulf %gr, %c : tensor<4xf32>
  %m2 = arith.addf %mb, %gc : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sq = arith.mulf %m2, %m2 : tensor<4xf32>
  %norm = linalg.reduce ins(%sq : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %n = tensor.extract %norm[] : tensor<f32>
  %ns = tensor.splat %n : tensor<4xf32>
  %u = arith.mulf %m2, %ns : tensor<4xf32>
  %w2 = arith.subf %w, %u : tensor<4xf32>
  return %w2, %m2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// LAMB's norms once sharded: each rank sums the squares of its shard into
// partial sums (a reduction loop over what it reads, beside the sum's
// initial value), which are gathered and summed. The sums scale the update
// and are part of it: the moment goes to the host with the weight.
// CHECK-LABEL: func.func @sharded_norm
// CHECK-SAME: (%{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<8xf32> {zero.memory = "host"}, %{{.*}}: tensor<8xf32>)
#rows = affine_map<(d0, d1) -> (d0, d1)>
#sums = affine_map<(d0, d1) -> (d0)>
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 2 of 2 state arguments of @sharded_norm in host memory}}
func.func @sharded_norm(%w: tensor<8xf32>, %m: tensor<8xf32>,
                        %g: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %b = arith.constant dense<0.9> : tensor<8xf32>
  %c = arith.constant dense<0.1> : tensor<8xf32>
  %gr = zero.all_reduce %g on @dp reduce = mean : tensor<8xf32>
  %mb = arith.mulf %m, %b : tensor<8xf32>
  %gc = arith.mulf %gr, %c : tensor<8xf32>
  %m2 = arith.addf %mb, %gc : tensor<8xf32>
  %sq = arith.mulf %m2, %m2 : tensor<8xf32>
  %rows = tensor.expand_shape %sq [[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %partial = linalg.generic {indexing_maps = [#rows, #sums], iterator_types = ["parallel", "reduction"]}
      ins(%rows : tensor<2x4xf32>) outs(%init : tensor<2xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2xf32>
  %all = zero.all_gather %partial on @dp : tensor<2xf32> -> tensor<4xf32>
  %all2 = tensor.expand_shape %all [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %init1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  %total = linalg.generic {indexing_maps = [#rows, #sums, #sums], iterator_types = ["parallel", "reduction"]}
      ins(%all2, %init1 : tensor<1x4xf32>, tensor<1xf32>) outs(%e1 : tensor<1xf32>) {
    ^bb0(%in: f32, %first: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
  } -> tensor<1xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.extract %total[%c0] : tensor<1xf32>
  %ns = tensor.splat %n : tensor<8xf32>
  %u = arith.mulf %m2, %ns : tensor<8xf32>
  %w2 = arith.subf %w, %u : tensor<8xf32>
  return %w2, %m2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A sum over the batch of the weight times the data (a backward pass's
// gradient of a scale) sums what it reads as a norm does, but reads the
// data, an argument that is not state: the weight stays on the device.
// CHECK-LABEL: func.func @batch_sum_reads_weight
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xf32>)
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 1 of 2 state arguments of @batch_sum_reads_weight in host memory}}
func.func @batch_sum_reads_weight(%w: tensor<4xf32>, %m: tensor<4xf32>,
                                  %x: tensor<2x4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %wb = linalg.broadcast ins(%w : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0]
  %y = arith.mulf %x, %wb : tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{zero-offload-state: argument 0 of @batch_sum_reads_weight stays on the device: 'linalg.reduce' reads it outside the update}}
  %s = linalg.reduce ins(%y : tensor<2x4xf32>) outs(%init : tensor<4xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
    }
  %c = arith.constant dense<0.9> : tensor<4xf32>
  %m2 = arith.mulf %m, %c : tensor<4xf32>
  %w2 = arith.subf %w, %m2 : tensor<4xf32>
  return %w2, %m2, %s : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A matrix-vector product is a reduction too, but it contracts the weight
// with another operand (the vector is indexed by a loop the output drops):
// the forward pass reads the weight, which stays on the device.
// CHECK-LABEL: func.func @matvec_reads_weight
// CHECK-SAME: (%{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32>)
#wmap = affine_map<(d0, d1) -> (d0, d1)>
#xmap = affine_map<(d0, d1) -> (d1)>
#ymap = affine_map<(d0, d1) -> (d0)>
zero.mesh @dp(shape = [2])
// expected-remark @below {{zero-offload-state: 1 of 2 state arguments of @matvec_reads_weight in host memory}}
func.func @matvec_reads_weight(%w: tensor<2x4xf32>, %m: tensor<2x4xf32>,
                               %x: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  // expected-remark @below {{zero-offload-state: argument 0 of @matvec_reads_weight stays on the device: 'linalg.generic' reads it outside the update}}
  %y = linalg.generic {indexing_maps = [#wmap, #xmap, #ymap], iterator_types = ["parallel", "reduction"]}
      ins(%w, %x : tensor<2x4xf32>, tensor<4xf32>) outs(%init : tensor<2xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %p, %acc : f32
      linalg.yield %s : f32
  } -> tensor<2xf32>
  %c = arith.constant dense<0.9> : tensor<2x4xf32>
  %m2 = arith.mulf %m, %c : tensor<2x4xf32>
  %w2 = arith.subf %w, %m2 : tensor<2x4xf32>
  return %w2, %m2, %y : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2xf32>
}

// -----

// No result is the next value of an argument: nothing moves.
// expected-remark @below {{zero-offload-state: @no_state keeps everything on the device: no result is the next value of a tensor argument}}
func.func @no_state(%x: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

// A loop carries a tensor, but the function returns no next value of an
// argument: there is no state to offload.
// expected-remark @below {{zero-offload-state: @loop keeps everything on the device: no result is the next value of a tensor argument (a loop carries tensors from step to step, but offload covers state that a function takes and returns)}}
func.func @loop(%w: tensor<4xf32>, %g: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %w) -> tensor<4xf32> {
    %n = arith.subf %a, %g : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %v = tensor.extract %r[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

// A loop that starts from an argument and returns its next value carries
// it from step to step. Its body reads it only as the update does, and so
// does what follows the loop: the argument goes to host memory, and the
// loop carries it there (zero.host_iter_args, whose buffers
// zero-offload-to-host places in host memory).
// CHECK-LABEL: func.func @loop_returns
// CHECK-SAME: (%{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32>)
// CHECK: scf.for
// CHECK: } {zero.host_iter_args = array<i64: 0>}
// PARAMS-LABEL: func.func @loop_returns
// PARAMS-SAME: (%{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32>)
// PARAMS: } {zero.host_iter_args = array<i64: 0>}
// expected-remark @below {{zero-offload-state: 1 of 1 state arguments of @loop_returns in host memory}}
func.func @loop_returns(%m: tensor<4xf32>, %g: tensor<4xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-remark @below {{zero-offload-state: iter_arg 0 of the loop, which carries argument 0 of @loop_returns from step to step, in host memory}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %m) -> tensor<4xf32> {
    %n = arith.addf %a, %g : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A training loop whose forward pass (a matmul in its body) reads the
// weight it carries: under offload=optimizer the weight stays on the
// device, the remark naming the reader; the moment beside it, which only
// the update reads, goes to host memory and the loop carries it there.
// offload=params moves the weight too, but the loop carries it on the
// device.
// CHECK-LABEL: func.func @loop_reads_weight
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xf32>)
// CHECK: } {zero.host_iter_args = array<i64: 1>}
// PARAMS-LABEL: func.func @loop_reads_weight
// PARAMS-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xf32>)
// PARAMS: } {zero.host_iter_args = array<i64: 1>}
// expected-remark @below {{zero-offload-state: 1 of 2 state arguments of @loop_reads_weight in host memory}}
func.func @loop_reads_weight(%w0: tensor<4x4xf32>, %m0: tensor<4x4xf32>,
                             %x: tensor<2x4xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %beta = arith.constant dense<0.9> : tensor<4x4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  // expected-remark @below {{zero-offload-state: iter_arg 1 of the loop, which carries argument 1 of @loop_reads_weight from step to step, in host memory}}
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%w = %w0, %m = %m0)
      -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    // expected-remark @below {{zero-offload-state: argument 0 of @loop_reads_weight stays on the device: 'linalg.matmul' reads it outside the update}}
    %y = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g = tensor.expand_shape %y [[0], [1]] output_shape [2, 4] : tensor<2x4xf32> into tensor<2x4xf32>
    %gg = tensor.concat dim(0) %g, %g : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %gr = zero.all_reduce %gg on @dp reduce = mean : tensor<4x4xf32>
    %mb = arith.mulf %m, %beta : tensor<4x4xf32>
    %m2 = arith.addf %mb, %gr : tensor<4x4xf32>
    %w2 = arith.subf %w, %m2 : tensor<4x4xf32>
    scf.yield %w2, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  return %r#0, %r#1 : tensor<4x4xf32>, tensor<4x4xf32>
}
zero.mesh @dp(shape = [2])

// -----

// A mixed-precision training loop as zero-defer-all-gather leaves it: it
// carries the fp32 master's shard, which only the update reads, and the
// bf16 copy the forward pass reads, gathered from the new shard's
// rounding. The master goes to host memory and the loop carries its shard
// there; the copy stays on the device.
// CHECK-LABEL: func.func @loop_carries_master_shard
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xbf16>)
// CHECK: } {zero.host_iter_args = array<i64: 0>}
// PARAMS-LABEL: func.func @loop_carries_master_shard
// PARAMS: } {zero.host_iter_args = array<i64: 0>}
// expected-remark @below {{zero-offload-state: 1 of 1 state arguments of @loop_carries_master_shard in host memory}}
func.func @loop_carries_master_shard(%w0: tensor<4x4xf32>, %x: tensor<2x4xbf16>)
    -> (tensor<4x4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %wf = tensor.collapse_shape %w0 [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %s0 = zero.shard_slice %wf on @dp : tensor<16xf32> -> tensor<8xf32>
  %b0 = arith.truncf %w0 : tensor<4x4xf32> to tensor<4x4xbf16>
  // expected-remark @below {{zero-offload-state: iter_arg 0 of the loop, which carries argument 0 of @loop_carries_master_shard from step to step, in host memory}}
  %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %s0, %b = %b0)
      -> (tensor<8xf32>, tensor<4x4xbf16>) {
    %y = linalg.matmul ins(%x, %b : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %yf = tensor.collapse_shape %y [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
    %yy = tensor.concat dim(0) %yf, %yf : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
    %g = zero.reduce_scatter %yy on @dp reduce = mean : tensor<16xf32> -> tensor<8xf32>
    %s2 = arith.subf %s, %g : tensor<8xf32>
    %t = arith.truncf %s2 : tensor<8xf32> to tensor<8xbf16>
    %n = zero.all_gather %t on @dp : tensor<8xbf16> -> tensor<16xbf16>
    %b2 = tensor.expand_shape %n [[0, 1]] output_shape [4, 4] : tensor<16xbf16> into tensor<4x4xbf16>
    scf.yield %s2, %b2 : tensor<8xf32>, tensor<4x4xbf16>
  }
  %last = zero.all_gather %r#0 on @dp : tensor<8xf32> -> tensor<16xf32>
  %w = tensor.expand_shape %last [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  return %w : tensor<4x4xf32>
}
zero.mesh @dp(shape = [2])

// -----

// A loop that carries the fp32 master whole and rounds it for the forward
// pass in every step keeps it on the device under offload=optimizer: the
// device would read all of it across the link each step. The remark names
// the rounding.
// CHECK-LABEL: func.func @loop_rounds_master_whole
// CHECK-SAME: (%{{.*}}: tensor<4x4xf32>, %{{.*}}: tensor<2x4xbf16>)
// CHECK-NOT: zero.host_iter_args
// PARAMS-LABEL: func.func @loop_rounds_master_whole
// PARAMS-SAME: (%{{.*}}: tensor<4x4xf32> {zero.memory = "host"}, %{{.*}}: tensor<2x4xbf16>)
// PARAMS-NOT: zero.host_iter_args
// expected-remark @below {{zero-offload-state: 0 of 1 state arguments of @loop_rounds_master_whole in host memory}}
func.func @loop_rounds_master_whole(%w0: tensor<4x4xf32>, %x: tensor<2x4xbf16>)
    -> (tensor<4x4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%w = %w0) -> (tensor<4x4xf32>) {
    // expected-remark @below {{zero-offload-state: argument 0 of @loop_rounds_master_whole stays on the device: 'arith.truncf' rounds it for the model in every step of a loop that carries it whole (its master goes to the host where the loop carries its shard: defer-all-gather, on more than one rank)}}
    %b = arith.truncf %w : tensor<4x4xf32> to tensor<4x4xbf16>
    %y = linalg.matmul ins(%x, %b : tensor<2x4xbf16>, tensor<4x4xbf16>) outs(%f : tensor<2x4xf32>) -> tensor<2x4xf32>
    %yy = tensor.concat dim(0) %y, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %g = zero.all_reduce %yy on @dp reduce = mean : tensor<4x4xf32>
    %w2 = arith.subf %w, %g : tensor<4x4xf32>
    scf.yield %w2 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}
zero.mesh @dp(shape = [2])

// -----

// State that an scf.while carries stays on the device: offload follows
// what a loop carries through an scf.for's iter_args only.
// CHECK-LABEL: func.func @while_carries
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>)
// expected-remark @below {{zero-offload-state: 0 of 1 state arguments of @while_carries in host memory}}
func.func @while_carries(%m: tensor<4xf32>, %g: tensor<4xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  // expected-remark @below {{zero-offload-state: argument 0 of @while_carries stays on the device: 'scf.while' carries it from step to step, which offload follows through an scf.for's iter_args only}}
  %r:2 = scf.while (%a = %m, %i = %c0) : (tensor<4xf32>, index) -> (tensor<4xf32>, index) {
    %go = arith.cmpi ult, %i, %c2 : index
    scf.condition(%go) %a, %i : tensor<4xf32>, index
  } do {
  ^bb0(%a: tensor<4xf32>, %i: index):
    %n = arith.addf %a, %g : tensor<4xf32>
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    scf.yield %n, %j : tensor<4xf32>, index
  }
  return %r#0 : tensor<4xf32>
}
