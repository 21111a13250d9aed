// ZeRO stages: what zero-shard-weight-update shards at stage 1, 2 and 3.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=stage=1 | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=stage=2 | FileCheck %s --check-prefix=STAGE2
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=stage=3 | FileCheck %s --check-prefix=STAGE3
// RUN: not zero-opt %s --split-input-file --zero-shard-weight-update=stage=4 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: zero-shard-weight-update: stage must be 1, 2 or 3, got 4

zero.mesh @dp(shape = [4])

// A single step. Stage 1 keeps the all-reduce and slices its result; stages
// 2 and 3 reduce-scatter. The weight enters whole, so stage 3 is stage 2.
// STAGE1-LABEL: func.func @step
// STAGE1: %[[G:.*]] = zero.all_reduce %{{.*}} on @dp reduce = mean : tensor<10xf32>
// STAGE1: %[[GP:.*]] = tensor.pad %[[G]] low[0] high[2]
// STAGE1: %[[GS:.*]] = zero.shard_slice %[[GP]] on @dp : tensor<12xf32> -> tensor<3xf32>
// STAGE1-NOT: zero.reduce_scatter
// STAGE1: arith.subf %{{.*}}, %[[GS]] : tensor<3xf32>
// STAGE1: zero.all_gather %{{.*}} on @dp : tensor<3xf32> -> tensor<12xf32>
// STAGE2-LABEL: func.func @step
// STAGE2-NOT: zero.all_reduce
// STAGE2: zero.reduce_scatter %{{.*}} on @dp reduce = mean : tensor<12xf32> -> tensor<3xf32>
// STAGE2: zero.all_gather %{{.*}} on @dp : tensor<3xf32> -> tensor<12xf32>
// STAGE3-LABEL: func.func @step
// STAGE3-NOT: zero.all_reduce
// STAGE3: zero.reduce_scatter %{{.*}} on @dp reduce = mean : tensor<12xf32> -> tensor<3xf32>
// STAGE3: zero.all_gather %{{.*}} on @dp : tensor<3xf32> -> tensor<12xf32>
func.func @step(%w: tensor<10xf32>, %gl: tensor<10xf32>) -> tensor<10xf32> {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  return %w2 : tensor<10xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A loop whose forward reads the weight twice (a stand-in for the forward
// and the backward pass). Below stage 3 the weight is loop-carried whole and
// sliced for the update each iteration. At stage 3 it is carried as a shard
// and each of its uses gets its own gather, just before it: CSE must not
// merge them (distinct zero.for_use), so the whole weight is not kept alive
// between the two uses.
// STAGE2-LABEL: func.func @loop
// STAGE2: scf.for {{.*}} iter_args(%[[W:.*]] = %{{.*}}) -> (tensor<10xf32>)
// STAGE2: arith.mulf %[[W]], %{{.*}} : tensor<10xf32>
// STAGE2: zero.shard_slice
// STAGE2: %[[NEW:.*]] = zero.all_gather
// STAGE2: scf.yield
// STAGE3-LABEL: func.func @loop
// STAGE3: %[[INIT:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xf32> -> tensor<3xf32>
// STAGE3: %[[R:.*]] = scf.for {{.*}} iter_args(%[[WS:.*]] = %[[INIT]]) -> (tensor<3xf32>)
// STAGE3: %[[A1:.*]] = zero.all_gather %[[WS]] on @dp {zero.for_use = [[U1:[0-9]+]] : i64} : tensor<3xf32> -> tensor<12xf32>
// STAGE3: %[[W1:.*]] = tensor.extract_slice %[[A1]][0] [10] [1]
// STAGE3: %[[GL:.*]] = arith.mulf %[[W1]], %{{.*}} : tensor<10xf32>
// STAGE3: %[[A2:.*]] = zero.all_gather %[[WS]] on @dp {zero.for_use = {{[0-9]+}} : i64} : tensor<3xf32> -> tensor<12xf32>
// STAGE3: %[[W2:.*]] = tensor.extract_slice %[[A2]][0] [10] [1]
// STAGE3: arith.addf %[[GL]], %[[W2]] : tensor<10xf32>
// STAGE3: zero.reduce_scatter
// STAGE3: %[[NEW:.*]] = arith.subf %[[WS]], %{{.*}} : tensor<3xf32>
// STAGE3: scf.yield %[[NEW]] : tensor<3xf32>
// STAGE3: %[[WHOLE:.*]] = zero.all_gather %[[R]] on @dp : tensor<3xf32> -> tensor<12xf32>
// STAGE3: %[[OUT:.*]] = tensor.extract_slice %[[WHOLE]][0] [10] [1]
// STAGE3: return %[[OUT]]
func.func @loop(%w0: tensor<10xf32>, %x: tensor<10xf32>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %y = arith.mulf %w, %x : tensor<10xf32>
    %gl = arith.addf %y, %w : tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}

// -----

zero.mesh @dp(shape = [4])

// fp32 master weights and a bf16 model copy, both carried; the forward reads
// only the copy, which the update makes from the new master weights. Below
// stage 3 the copy is carried whole and gathered (in bf16) at the end of each
// step. At stage 3 it is a carried shard too, truncated on the shard and
// gathered in bf16 just before its use.
// STAGE2-LABEL: func.func @model_copy
// STAGE2: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[COPY:.*]] = %{{.*}}) -> (tensor<3xf32>, tensor<10xbf16>)
// STAGE2: arith.extf %[[COPY]] : tensor<10xbf16> to tensor<10xf32>
// STAGE2: zero.all_gather %{{.*}} on @dp : tensor<3xbf16> -> tensor<12xbf16>
// STAGE3-LABEL: func.func @model_copy
// STAGE3: %[[CINIT:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xbf16> -> tensor<3xbf16>
// STAGE3: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[CS:.*]] = %[[CINIT]]) -> (tensor<3xf32>, tensor<3xbf16>)
// STAGE3: %[[CW:.*]] = zero.all_gather %[[CS]] on @dp {zero.for_use = {{[0-9]+}} : i64} : tensor<3xbf16> -> tensor<12xbf16>
// STAGE3: %[[C:.*]] = tensor.extract_slice %[[CW]][0] [10] [1]
// STAGE3: arith.extf %[[C]] : tensor<10xbf16> to tensor<10xf32>
// STAGE3: %[[NEXT:.*]] = arith.truncf %{{.*}} : tensor<3xf32> to tensor<3xbf16>
// STAGE3: scf.yield %{{.*}}, %[[NEXT]] : tensor<3xf32>, tensor<3xbf16>
// STAGE3: zero.all_gather %{{.*}} on @dp : tensor<3xbf16> -> tensor<12xbf16>
func.func @model_copy(%w0: tensor<10xf32>, %c0w: tensor<10xbf16>, %x: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0, %copy = %c0w) -> (tensor<10xf32>, tensor<10xbf16>) {
    %wf = arith.extf %copy : tensor<10xbf16> to tensor<10xf32>
    %gl = arith.mulf %wf, %x : tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    %c2 = arith.truncf %w2 : tensor<10xf32> to tensor<10xbf16>
    scf.yield %w2, %c2 : tensor<10xf32>, tensor<10xbf16>
  }
  return %r#0, %r#1 : tensor<10xf32>, tensor<10xbf16>
}
