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

// No result is the next value of an argument: nothing moves.
// expected-remark @below {{zero-offload-state: @no_state keeps everything on the device: no result is the next value of a tensor argument}}
func.func @no_state(%x: tensor<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0] : tensor<4xf32>
  return %v : f32
}

// -----

// State carried by a training loop is outside what offload covers.
// expected-remark @below {{zero-offload-state: @loop keeps everything on the device: no result is the next value of a tensor argument (its state is carried by a loop; offload covers a step's arguments)}}
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
// it from step to step: under offload=optimizer the remark says so, rather
// than taking the loop for a reader outside the update.
// CHECK-LABEL: func.func @loop_returns
// CHECK-SAME: (%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>)
// PARAMS-LABEL: func.func @loop_returns
// PARAMS-SAME: (%{{.*}}: tensor<4xf32> {zero.memory = "host"}, %{{.*}}: tensor<4xf32>)
// expected-remark @below {{zero-offload-state: 0 of 1 state arguments of @loop_returns in host memory}}
func.func @loop_returns(%m: tensor<4xf32>, %g: tensor<4xf32>)
    -> (tensor<4xf32> {zero.state_of = 0 : i64}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-remark @below {{zero-offload-state: argument 0 of @loop_returns stays on the device: 'scf.for' carries it from step to step (offload covers the state a step function takes and returns: call the step once a step, as zero-launch --steps does)}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %m) -> tensor<4xf32> {
    %n = arith.addf %a, %g : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
