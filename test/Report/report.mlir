// zero-report: bytes sent per rank by each collective kind, per function.
// RUN: zero-opt %s --split-input-file --zero-report -o /dev/null | FileCheck %s --check-prefix=TEXT
// RUN: zero-opt %s --split-input-file --zero-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: zero-opt %s --split-input-file --zero-report | FileCheck %s --check-prefix=IR

zero.mesh @dp(shape = [8])

// 1000x512 f32 = 2048000 bytes: an all-reduce sends 2 * 7/8 of it.
// TEXT-LABEL: zero-report: @step
// TEXT-NEXT: collective count bytes sent per rank
// TEXT-NEXT: all_reduce 1 3584000
// TEXT-NEXT: total 1 3584000
// The weight is state; the local gradient, read only by the all-reduce, is
// not; the reduced gradient is whole.
// TEXT: model state bytes per rank: 4096000
// TEXT-NEXT: weights and optimizer state: 2048000, reduced gradients: 2048000
// JSON: "all_reduce": {
// JSON-NEXT: "bytes_per_rank": 3584000,
// JSON-NEXT: "count": 1,
// JSON-NEXT: "unknown": 0
// JSON: "function": "step",
// JSON-NEXT: "model_state_bytes": {
// JSON-NEXT: "delayed_update": 0,
// JSON-NEXT: "device": 4096000,
// JSON-NEXT: "error_feedback_residuals": 0,
// JSON-NEXT: "host": 0,
// JSON-NEXT: "reduced_gradients": 2048000,
// JSON-NEXT: "total": 4096000,
// JSON-NEXT: "weights_and_optimizer_state": 2048000
// The IR is unchanged.
// IR-LABEL: func.func @step
// IR: zero.all_reduce
func.func @step(%w: tensor<1000x512xf32>, %g: tensor<1000x512xf32>) -> tensor<1000x512xf32> {
  %r = zero.all_reduce %g on @dp reduce = sum : tensor<1000x512xf32>
  %w2 = arith.subf %w, %r : tensor<1000x512xf32>
  return %w2 : tensor<1000x512xf32>
}

// -----

zero.mesh @h(shape = [2, 4])

// Groups of 4 over axis 1; a loop of 5 iterations counts 5 times; a loop of
// unknown trip count makes the bytes unknown.
// TEXT-LABEL: zero-report: @loops
// TEXT-NEXT: collective count bytes sent per rank
// TEXT-NEXT: reduce_scatter 5 15360
// TEXT-NEXT: all_gather 6 15360 (+1 of unknown size)
// TEXT-NEXT: shard_slice 1 0
// TEXT-NEXT: total 12 30720 (+1 of unknown size)
// The loops carry nothing; the reduce-scatter's shard is the gradient.
// TEXT: weights and optimizer state: 0, reduced gradients: 1024
func.func @loops(%x: tensor<1024xf32>, %s: tensor<256xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %i = %c0 to %c5 step %c1 {
    %r = zero.reduce_scatter %x on @h axes = [1] reduce = sum : tensor<1024xf32> -> tensor<256xf32>
    %g = zero.all_gather %s on @h axes = [1] : tensor<256xf32> -> tensor<1024xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %g = zero.all_gather %s on @h axes = [1] : tensor<256xf32> -> tensor<1024xf32>
  }
  %l = zero.shard_slice %x on @h axes = [1] : tensor<1024xf32> -> tensor<256xf32>
  return
}

// -----

// Asynchronous collectives count as the collective; dynamic shapes are
// unknown.
zero.mesh @dp(shape = [2])
// TEXT-LABEL: zero-report: @async_and_dynamic
// TEXT-NEXT: collective count bytes sent per rank
// TEXT-NEXT: all_reduce 2 16 (+1 of unknown size)
func.func @async_and_dynamic(%x: tensor<4xf32>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<?xf32>) {
  %f = zero.async : !zero.future<tensor<4xf32>> {
    %a = zero.all_reduce %x on @dp reduce = sum : tensor<4xf32>
    zero.yield %a : tensor<4xf32>
  }
  %b = zero.all_reduce %d on @dp reduce = sum : tensor<?xf32>
  %v = zero.await %f reads %x : !zero.future<tensor<4xf32>>, tensor<4xf32>
  return %v, %b : tensor<4xf32>, tensor<?xf32>
}

// -----

// A function without collectives reports an empty table.
// TEXT-LABEL: zero-report: @no_collectives
// TEXT-NEXT: collective count bytes sent per rank
// TEXT-NEXT: total 0 0
func.func @no_collectives(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Given against rewritten: record-given prints nothing and records the
// figures; the report after the rewrite compares with them and drops the
// record from the IR.
// RUN: zero-opt %s --split-input-file --zero-report=record-given --zero-weight-update-sharding --zero-report 2>&1 | FileCheck %s --check-prefix=GIVEN
// GIVEN-LABEL: zero-report: @compared
// GIVEN: reduce_scatter 1 1792000
// GIVEN: bytes sent per rank: 5376000 (given 3584000, ratio 1.500)
// GIVEN: update elements per rank: 256000 (given 2048000, ratio 0.125)
// The state enters whole; the reduced gradient is a shard.
// GIVEN: model state bytes per rank: 4352000 (given 6144000, ratio 0.708)
// GIVEN-NEXT: weights and optimizer state: 4096000, reduced gradients: 256000
// With the state passed as shards, model state is 1/8 of the given.
// RUN: zero-opt %s --split-input-file --zero-report=record-given --zero-weight-update-sharding=shard-function-boundary --zero-report 2>&1 | FileCheck %s --check-prefix=BOUNDARY
// BOUNDARY-LABEL: zero-report: @compared
// BOUNDARY: model state bytes per rank: 768000 (given 6144000, ratio 0.125)
// GIVEN-NOT: zero.report_given
// GIVEN: func.func @compared
zero.mesh @dp8(shape = [8])

func.func @compared(%w: tensor<1000x512xf32>, %m: tensor<1000x512xf32>,
                    %g_local: tensor<1000x512xf32>)
    -> (tensor<1000x512xf32>, tensor<1000x512xf32>) {
  %beta = arith.constant dense<0.9> : tensor<1000x512xf32>
  %lr = arith.constant dense<0.01> : tensor<1000x512xf32>
  %g = zero.all_reduce %g_local on @dp8 reduce = mean : tensor<1000x512xf32>
  %m1 = arith.mulf %m, %beta : tensor<1000x512xf32>
  %m2 = arith.addf %m1, %g : tensor<1000x512xf32>
  %d = arith.mulf %m2, %lr : tensor<1000x512xf32>
  %w2 = arith.subf %w, %d : tensor<1000x512xf32>
  return %w2, %m2 : tensor<1000x512xf32>, tensor<1000x512xf32>
}

// -----

// A training loop: the state is what the loop carries (here a weight and a
// momentum of 64 floats), counted per rank as the loop holds it.
// RUN: zero-opt %s --split-input-file --zero-report=record-given --zero-weight-update-sharding='defer-all-gather bucket-bytes=0' --zero-report 2>&1 | FileCheck %s --check-prefix=LOOP
// LOOP-LABEL: zero-report: @training_loop
// The given loop carries 2 x 256 B and all-reduces 256 B. The sharded loop
// carries two 64 B shards and the weight's 256 B copy, and reduce-scatters
// into a 64 B shard.
// LOOP: model state bytes per rank: 448 (given 768, ratio 0.583)
// LOOP-NEXT: weights and optimizer state: 384, reduced gradients: 64
zero.mesh @dp4(shape = [4])

func.func @training_loop(%w0: tensor<64xf32>, %m0: tensor<64xf32>, %x: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %beta = arith.constant dense<0.9> : tensor<64xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%w = %w0, %m = %m0)
      -> (tensor<64xf32>, tensor<64xf32>) {
    %gl = arith.mulf %w, %x : tensor<64xf32>
    %g = zero.all_reduce %gl on @dp4 reduce = mean : tensor<64xf32>
    %m1 = arith.mulf %m, %beta : tensor<64xf32>
    %m2 = arith.addf %m1, %g : tensor<64xf32>
    %w2 = arith.subf %w, %m2 : tensor<64xf32>
    scf.yield %w2, %m2 : tensor<64xf32>, tensor<64xf32>
  }
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xf32>
}

// -----

// Two gradients bucketed into one reduce-scatter: the local gradients reach
// it through the bucket's tensor.concat and are still not model state. What
// a rank holds after sharding is its shards of the optimizer state and of
// the reduced gradients (one bucket's chunk: two 16-element shards side by
// side, each smaller than the 256-byte alignment), plus the whole weights
// and moments this step takes.
// RUN: zero-opt %s --split-input-file --zero-report=record-given --zero-weight-update-sharding --zero-report 2>&1 | FileCheck %s --check-prefix=BUCKETED
// BUCKETED-LABEL: zero-report: @two
// BUCKETED: reduce_scatter 1
// BUCKETED: model state bytes per rank: 1152 (given 1536, ratio 0.750)
// BUCKETED-NEXT: weights and optimizer state: 1024, reduced gradients: 128
zero.mesh @dp(shape = [4])

func.func @two(%w: tensor<64xf32>, %m: tensor<64xf32>, %g: tensor<64xf32>,
               %w2: tensor<64xf32>, %m2: tensor<64xf32>, %g2: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %c = arith.constant dense<0.5> : tensor<64xf32>
  %r = zero.all_reduce %g on @dp reduce = mean : tensor<64xf32>
  %mn = arith.addf %m, %r : tensor<64xf32>
  %wn = arith.subf %w, %mn : tensor<64xf32>
  %r2 = zero.all_reduce %g2 on @dp reduce = mean : tensor<64xf32>
  %mn2 = arith.addf %m2, %r2 : tensor<64xf32>
  %wn2 = arith.subf %w2, %mn2 : tensor<64xf32>
  return %wn, %mn, %wn2, %mn2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// A program with no communication says so, in text and JSON alike.
// TEXT-LABEL: zero-report: @local
// TEXT: no communication
// JSON: "hidden_share": null,
// JSON: "function": "local",
func.func @local(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Buffers: a transpose into a buffer has no result to follow (ASan caught
// the report reading one); the report counts no state of buffers.
// TEXT-LABEL: zero-report: @buffers
// TEXT: model state bytes per rank: 0
// TEXT: no communication
func.func @buffers(%x: memref<4x4xf32>, %t: memref<4x4xf32>) {
  linalg.transpose ins(%x : memref<4x4xf32>) outs(%t : memref<4x4xf32>) permutation = [1, 0]
  return
}
