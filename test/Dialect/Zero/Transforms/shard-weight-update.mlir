// RUN: zero-opt %s --split-input-file --zero-shard-weight-update | FileCheck %s

// Momentum SGD on 8 ranks: 1000x512 = 512000 elements divide by 8, so no
// padding. The decay m * beta, which does not read the gradient, moves onto
// the shard too.
zero.mesh @dp(shape = [8])

// CHECK-LABEL: func.func @momentum
// CHECK-SAME: (%[[W:.*]]: tensor<1000x512xf32>, %[[M:.*]]: tensor<1000x512xf32>, %[[G:.*]]: tensor<1000x512xf32>)
// CHECK-NOT: zero.all_reduce
// CHECK-NOT: arith.constant dense<{{.*}}> : tensor<1000x512xf32>
// Shard-shaped splat constants are made once per block, at its start.
// CHECK-DAG: %[[BETA:.*]] = arith.constant dense<0.899999976> : tensor<64000xf32>
// CHECK-DAG: %[[LR:.*]] = arith.constant dense<{{.*}}> : tensor<64000xf32>
// CHECK: %[[GF:.*]] = tensor.collapse_shape %[[G]] {{\[\[}}0, 1]] : tensor<1000x512xf32> into tensor<512000xf32>
// CHECK: %[[GS:.*]] = zero.reduce_scatter %[[GF]] on @dp reduce = mean : tensor<512000xf32> -> tensor<64000xf32>
// CHECK: %[[MF:.*]] = tensor.collapse_shape %[[M]]
// CHECK: %[[MS:.*]] = zero.shard_slice %[[MF]] on @dp : tensor<512000xf32> -> tensor<64000xf32>
// CHECK: %[[M1:.*]] = arith.mulf %[[MS]], %[[BETA]] : tensor<64000xf32>
// CHECK: %[[M2:.*]] = arith.addf %[[M1]], %[[GS]] : tensor<64000xf32>
// CHECK: %[[D:.*]] = arith.mulf %[[M2]], %[[LR]] : tensor<64000xf32>
// CHECK: %[[WS:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<512000xf32> -> tensor<64000xf32>
// CHECK: %[[W2:.*]] = arith.subf %[[WS]], %[[D]] : tensor<64000xf32>
// CHECK: %[[M2F:.*]] = zero.all_gather %[[M2]] on @dp : tensor<64000xf32> -> tensor<512000xf32>
// CHECK: %[[M2E:.*]] = tensor.expand_shape %[[M2F]] {{\[\[}}0, 1]] output_shape [1000, 512]
// CHECK: %[[W2F:.*]] = zero.all_gather %[[W2]] on @dp : tensor<64000xf32> -> tensor<512000xf32>
// CHECK: %[[W2E:.*]] = tensor.expand_shape %[[W2F]]
// CHECK: return %[[W2E]], %[[M2E]]
func.func @momentum(%w: tensor<1000x512xf32>, %m: tensor<1000x512xf32>,
                    %g_local: tensor<1000x512xf32>)
    -> (tensor<1000x512xf32>, tensor<1000x512xf32>) {
  %beta = arith.constant dense<0.9> : tensor<1000x512xf32>
  %lr = arith.constant dense<0.01> : tensor<1000x512xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1000x512xf32>
  %m1 = arith.mulf %m, %beta : tensor<1000x512xf32>
  %m2 = arith.addf %m1, %g : tensor<1000x512xf32>
  %d = arith.mulf %m2, %lr : tensor<1000x512xf32>
  %w2 = arith.subf %w, %d : tensor<1000x512xf32>
  return %w2, %m2 : tensor<1000x512xf32>, tensor<1000x512xf32>
}

// -----

// 10 elements on 3 ranks: padded to 12, shards of 4, unpadded after the
// gather.
zero.mesh @dp(shape = [3])

// CHECK-LABEL: func.func @sgd_padded
// CHECK-SAME: (%[[W:.*]]: tensor<10xf32>, %[[G:.*]]: tensor<10xf32>)
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[GP:.*]] = tensor.pad %[[G]] low[0] high[2]
// CHECK: tensor.yield %[[Z]]
// CHECK: } : tensor<10xf32> to tensor<12xf32>
// CHECK: %[[GS:.*]] = zero.reduce_scatter %[[GP]] on @dp reduce = sum : tensor<12xf32> -> tensor<4xf32>
// CHECK: %[[WP:.*]] = tensor.pad %[[W]] low[0] high[2]
// CHECK: %[[WS:.*]] = zero.shard_slice %[[WP]] on @dp : tensor<12xf32> -> tensor<4xf32>
// CHECK: %[[W2:.*]] = arith.subf %[[WS]], %[[GS]] : tensor<4xf32>
// CHECK: %[[F:.*]] = zero.all_gather %[[W2]] on @dp : tensor<4xf32> -> tensor<12xf32>
// CHECK: %[[U:.*]] = tensor.extract_slice %[[F]][0] [10] [1] : tensor<12xf32> to tensor<10xf32>
// CHECK: return %[[U]]
func.func @sgd_padded(%w: tensor<10xf32>, %g_local: tensor<10xf32>) -> tensor<10xf32> {
  %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  return %w2 : tensor<10xf32>
}

// -----

// A 2x4 mesh whose gradient is reduced over axis 1 only: the shards and the
// gather stay within that group.
zero.mesh @hybrid(shape = [2, 4])

// CHECK-LABEL: func.func @one_axis
// CHECK: zero.reduce_scatter %{{.*}} on @hybrid axes = [1] reduce = sum : tensor<8xf32> -> tensor<2xf32>
// CHECK: zero.shard_slice %{{.*}} on @hybrid axes = [1] : tensor<8xf32> -> tensor<2xf32>
// CHECK: zero.all_gather %{{.*}} on @hybrid axes = [1] : tensor<2xf32> -> tensor<8xf32>
func.func @one_axis(%w: tensor<8xf32>, %g_local: tensor<8xf32>) -> tensor<8xf32> {
  %g = zero.all_reduce %g_local on @hybrid axes = [1] reduce = sum : tensor<8xf32>
  %w2 = arith.subf %w, %g : tensor<8xf32>
  return %w2 : tensor<8xf32>
}

// -----

// Mixed precision: the fp32 master weight and its bf16 copy both leave the
// step; each is gathered in its own type.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @mixed_precision
// CHECK: %[[W2:.*]] = arith.subf %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: %[[B:.*]] = arith.truncf %[[W2]] : tensor<16xf32> to tensor<16xbf16>
// CHECK: zero.all_gather %[[W2]] on @dp : tensor<16xf32> -> tensor<64xf32>
// CHECK: zero.all_gather %[[B]] on @dp : tensor<16xbf16> -> tensor<64xbf16>
func.func @mixed_precision(%w: tensor<64xf32>, %g_local: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xbf16>) {
  %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<64xf32>
  %w2 = arith.subf %w, %g : tensor<64xf32>
  %b = arith.truncf %w2 : tensor<64xf32> to tensor<64xbf16>
  return %w2, %b : tensor<64xf32>, tensor<64xbf16>
}

// -----

// Inside a training loop the update ends at scf.yield. A loop-carried value
// that only the update reads (here the weight itself: nothing else in the
// loop uses it) stays a shard across iterations: sliced once before the loop,
// gathered once after it.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[W0:.*]]: tensor<6xf32>, %[[GL:.*]]: tensor<6xf32>)
// CHECK: %[[S0:.*]] = zero.shard_slice %[[W0]] on @dp : tensor<6xf32> -> tensor<3xf32>
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[WI:.*]] = %[[S0]]) -> (tensor<3xf32>)
// CHECK:   %[[G:.*]] = zero.reduce_scatter %[[GL]] on @dp reduce = sum : tensor<6xf32> -> tensor<3xf32>
// CHECK:   %[[WN:.*]] = arith.subf %[[WI]], %[[G]] : tensor<3xf32>
// CHECK:   scf.yield %[[WN]] : tensor<3xf32>
// CHECK: %[[F:.*]] = zero.all_gather %[[R]] on @dp : tensor<3xf32> -> tensor<6xf32>
// CHECK: return %[[F]]
func.func @loop(%w0: tensor<6xf32>, %g_local: tensor<6xf32>) -> tensor<6xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %w = scf.for %i = %c0 to %c4 step %c1 iter_args(%wi = %w0) -> tensor<6xf32> {
    %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<6xf32>
    %wn = arith.subf %wi, %g : tensor<6xf32>
    scf.yield %wn : tensor<6xf32>
  }
  return %w : tensor<6xf32>
}

// -----

// A training loop whose forward pass reads the weight: the weight is
// gathered every iteration, the momentum stays a carried shard (padded from
// 5 to 6 elements) and is gathered once after the loop.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @loop_with_state
// CHECK-SAME: (%[[W0:.*]]: tensor<5xf32>, %[[M0:.*]]: tensor<5xf32>, %[[X:.*]]: tensor<5xf32>)
// CHECK: %[[MP:.*]] = tensor.pad %[[M0]]
// CHECK: %[[MS:.*]] = zero.shard_slice %[[MP]] on @dp : tensor<6xf32> -> tensor<3xf32>
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[W:.*]] = %[[W0]], %[[M:.*]] = %[[MS]]) -> (tensor<5xf32>, tensor<3xf32>)
// CHECK:   arith.mulf %[[W]], %[[X]] : tensor<5xf32>
// CHECK:   %[[M2:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<3xf32>
// CHECK:   %[[WG:.*]] = zero.all_gather %{{.*}} on @dp : tensor<3xf32> -> tensor<6xf32>
// CHECK:   %[[WF:.*]] = tensor.extract_slice %[[WG]][0] [5] [1]
// CHECK:   scf.yield %[[WF]], %[[M2]] : tensor<5xf32>, tensor<3xf32>
// CHECK: %[[MG:.*]] = zero.all_gather %[[R]]#1 on @dp : tensor<3xf32> -> tensor<6xf32>
// CHECK: %[[MF:.*]] = tensor.extract_slice %[[MG]][0] [5] [1]
// CHECK: return %[[R]]#0, %[[MF]]
func.func @loop_with_state(%w0: tensor<5xf32>, %m0: tensor<5xf32>,
                           %x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %beta = arith.constant dense<0.9> : tensor<5xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%w = %w0, %m = %m0)
      -> (tensor<5xf32>, tensor<5xf32>) {
    %g_local = arith.mulf %w, %x : tensor<5xf32>
    %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<5xf32>
    %md = arith.mulf %m, %beta : tensor<5xf32>
    %m2 = arith.addf %md, %g : tensor<5xf32>
    %w2 = arith.subf %w, %m2 : tensor<5xf32>
    scf.yield %w2, %m2 : tensor<5xf32>, tensor<5xf32>
  }
  return %r#0, %r#1 : tensor<5xf32>, tensor<5xf32>
}

// -----

// Several parameters: each gradient is sharded on its own.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @two_parameters
// CHECK-COUNT-2: zero.reduce_scatter
// CHECK-NOT: zero.all_reduce
// CHECK-COUNT-2: zero.all_gather
func.func @two_parameters(%w: tensor<4x4xf32>, %b: tensor<4xf32>,
                          %gw: tensor<4x4xf32>, %gb: tensor<4xf32>)
    -> (tensor<4x4xf32>, tensor<4xf32>) {
  %g1 = zero.all_reduce %gw on @dp reduce = sum : tensor<4x4xf32>
  %g2 = zero.all_reduce %gb on @dp reduce = sum : tensor<4xf32>
  %w2 = arith.subf %w, %g1 : tensor<4x4xf32>
  %b2 = arith.subf %b, %g2 : tensor<4xf32>
  return %w2, %b2 : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// Gradient clipping by a global norm, 100 elements on 4 ranks. The norm is
// computed in zero's one order for full reductions (zero-order-reductions):
// blocks of 16 elements (the block of a 100-element tensor), so each shard
// is aligned to whole blocks: 25 elements per rank become 32 (padded to
// 128). Each rank sums its two blocks, its padding masked to -0.0 (the
// identity of addf); an all-gather gives every rank all eight partials; the
// seven real blocks' partials are added to the original init in index order.
// The same bits as the program as given, for any number of ranks.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @clip_by_norm
// CHECK-SAME: (%[[W:.*]]: tensor<100xf32>, %[[G:.*]]: tensor<100xf32>)
// CHECK: %[[GS:.*]] = zero.reduce_scatter %{{.*}} on @dp reduce = sum : tensor<128xf32> -> tensor<32xf32>
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[SQ:.*]] = arith.mulf %[[GS]], %[[GS]] : tensor<32xf32>
// CHECK: %[[R:.*]] = zero.replica_index on @dp : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[R]], %[[C32]] : index
// CHECK: %[[C100:.*]] = arith.constant 100 : index
// CHECK: %[[NEGZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<32xf32>)
// CHECK:   %[[I:.*]] = linalg.index 0 : index
// CHECK:   %[[GI:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK:   %[[REAL:.*]] = arith.cmpi ult, %[[GI]], %[[C100]] : index
// CHECK:   arith.select %[[REAL]], %{{.*}}, %[[NEGZERO]] : f32
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[MASKED]] {{\[\[}}0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
// CHECK: %[[IDENTITIES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<2x16xf32>) outs(%[[IDENTITIES]] : tensor<2xf32>)
// CHECK:   arith.addf
// CHECK: %[[ALL:.*]] = zero.all_gather %[[PARTIALS]] on @dp : tensor<2xf32> -> tensor<8xf32>
// CHECK: %[[REALBLOCKS:.*]] = tensor.extract_slice %[[ALL]][0] [7] [1] : tensor<8xf32> to tensor<7xf32>
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[REALBLOCKS]] {{\[\[}}0, 1]] output_shape [1, 7]
// CHECK: %[[START:.*]] = tensor.expand_shape %[[INIT]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROW]], %[[START]] : tensor<1x7xf32>, tensor<1xf32>)
// CHECK:   %[[K:.*]] = linalg.index 1 : index
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : index
// CHECK:   %[[ACC:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:   arith.addf %{{.*}}, %[[ACC]] : f32
// CHECK: %[[NORM:.*]] = tensor.collapse_shape %[[SUM]] [] : tensor<1xf32> into tensor<f32>
// CHECK: tensor.extract %[[NORM]][]
// CHECK: %[[SCALE:.*]] = tensor.splat %{{.*}} : tensor<32xf32>
// CHECK: arith.mulf %[[GS]], %[[SCALE]] : tensor<32xf32>
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<32xf32> -> tensor<128xf32>
// CHECK-NOT: zero.all_reduce
func.func @clip_by_norm(%w: tensor<100xf32>, %g_local: tensor<100xf32>) -> tensor<100xf32> {
  %zero = arith.constant 0.0 : f32
  %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<100xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sq = arith.mulf %g, %g : tensor<100xf32>
  %sum = linalg.reduce ins(%sq : tensor<100xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %s = tensor.extract %sum[] : tensor<f32>
  %scale = math.rsqrt %s : f32
  %scale_t = tensor.splat %scale : tensor<100xf32>
  %c = arith.mulf %g, %scale_t : tensor<100xf32>
  %w2 = arith.subf %w, %c : tensor<100xf32>
  return %w2 : tensor<100xf32>
}

// -----

// LAMB-style trust ratio on an 8x4 weight over 4 ranks: ||w||, a reduction
// over a flattening of what the update reads anyway, is sharded with it; so
// is ||g||. Shards of 8 elements are aligned to the 16-element block.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @weight_norm
// CHECK: %[[GS:.*]] = zero.reduce_scatter %{{.*}} : tensor<64xf32> -> tensor<16xf32>
// CHECK: %[[WS:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<64xf32> -> tensor<16xf32>
// CHECK: %[[WW:.*]] = arith.mulf %[[WS]], %[[WS]] : tensor<16xf32>
// CHECK: linalg.generic {{.*}}ins(%[[WW]] : tensor<16xf32>)
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[GG:.*]] = arith.mulf %[[GS]], %[[GS]] : tensor<16xf32>
// CHECK: linalg.generic {{.*}}ins(%[[GG]] : tensor<16xf32>)
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<1xf32> -> tensor<4xf32>
// CHECK: arith.subf %[[WS]], %{{.*}} : tensor<16xf32>
// CHECK: zero.all_gather %{{.*}} : tensor<16xf32> -> tensor<64xf32>
// CHECK-NOT: zero.shard_slice
// CHECK-NOT: zero.all_reduce
func.func @weight_norm(%w: tensor<8x4xf32>, %g_local: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<8x4xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %ww = arith.mulf %w, %w : tensor<8x4xf32>
  %ww_flat = tensor.collapse_shape %ww [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %sw = linalg.reduce ins(%ww_flat : tensor<32xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %gg = arith.mulf %g, %g : tensor<8x4xf32>
  %sg = linalg.reduce ins(%gg : tensor<8x4xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %acc, %x : f32
      linalg.yield %s : f32
    }
  %nw = tensor.extract %sw[] : tensor<f32>
  %ng = tensor.extract %sg[] : tensor<f32>
  %trust = arith.divf %nw, %ng : f32
  %trust_t = tensor.splat %trust : tensor<8x4xf32>
  %d = arith.mulf %g, %trust_t : tensor<8x4xf32>
  %w2 = arith.subf %w, %d : tensor<8x4xf32>
  return %w2 : tensor<8x4xf32>
}

// -----

// An inf check for loss scaling, 6 elements on 4 ranks (one 16-element block
// on rank 0, padded to 64): the `or` of booleans is masked with false, its
// partials travel as i32 (the runtime moves no i1) and are truncated back;
// the largest magnitude, a maximumf, is masked with -inf.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @inf_check
// CHECK: %[[GS:.*]] = zero.reduce_scatter %{{.*}} : tensor<64xf32> -> tensor<16xf32>
// CHECK: %[[INF:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : tensor<16xf32>
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[FALSE]] : i1
// CHECK: %[[ANY:.*]] = linalg.generic {{.*}}ins(%{{.*}} : tensor<1x16xi1>)
// CHECK:   arith.ori
// CHECK: %[[WIDE:.*]] = arith.extui %[[ANY]] : tensor<1xi1> to tensor<1xi32>
// CHECK: %[[ALL:.*]] = zero.all_gather %[[WIDE]] on @dp : tensor<1xi32> -> tensor<4xi32>
// CHECK: %[[REAL:.*]] = tensor.extract_slice %[[ALL]][0] [1] [1] : tensor<4xi32> to tensor<1xi32>
// CHECK: arith.trunci %[[REAL]] : tensor<1xi32> to tensor<1xi1>
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : f32
// CHECK: linalg.generic
// CHECK:   arith.maximumf
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<1xf32> -> tensor<4xf32>
// CHECK-NOT: zero.all_reduce
func.func @inf_check(%w: tensor<6xf32>, %g_local: tensor<6xf32>)
    -> (tensor<6xf32>, tensor<i1>, tensor<f32>) {
  %false = arith.constant false
  %ninf = arith.constant 0xFF800000 : f32
  %inf = arith.constant dense<0x7F800000> : tensor<6xf32>
  %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<6xf32>
  %a = math.absf %g : tensor<6xf32>
  %isinf = arith.cmpf oeq, %a, %inf : tensor<6xf32>
  %eb = tensor.empty() : tensor<i1>
  %initb = linalg.fill ins(%false : i1) outs(%eb : tensor<i1>) -> tensor<i1>
  %any = linalg.reduce ins(%isinf : tensor<6xi1>) outs(%initb : tensor<i1>) dimensions = [0]
    (%x: i1, %acc: i1) {
      %o = arith.ori %x, %acc : i1
      linalg.yield %o : i1
    }
  %ef = tensor.empty() : tensor<f32>
  %initf = linalg.fill ins(%ninf : f32) outs(%ef : tensor<f32>) -> tensor<f32>
  %amax = linalg.reduce ins(%a : tensor<6xf32>) outs(%initf : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc : f32
      linalg.yield %m : f32
    }
  %w2 = arith.subf %w, %g : tensor<6xf32>
  return %w2, %any, %amax : tensor<6xf32>, tensor<i1>, tensor<f32>
}

// -----

// A product is associative with identity 1.0: its blocks' partials are
// all-gathered and multiplied in order, like a sum's (padding masked to 1.0).
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @product_reduction
// CHECK: zero.reduce_scatter %{{.*}} : tensor<64xf32> -> tensor<16xf32>
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ONE]] : f32
// CHECK: linalg.generic
// CHECK:   arith.mulf
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<1xf32> -> tensor<4xf32>
// CHECK-NOT: zero.all_reduce
func.func @product_reduction(%w: tensor<60xf32>, %gl: tensor<60xf32>) -> (tensor<60xf32>, tensor<f32>) {
  %one = arith.constant 1.0 : f32
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<60xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %p = linalg.reduce ins(%g : tensor<60xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.mulf %x, %acc : f32
      linalg.yield %s : f32
    }
  %w2 = arith.subf %w, %g : tensor<60xf32>
  return %w2, %p : tensor<60xf32>, tensor<f32>
}
