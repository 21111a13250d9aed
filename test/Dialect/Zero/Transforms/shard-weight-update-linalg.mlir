// zero-shard-weight-update on update code in linalg form: generics with
// parallel iterators and identity or 0-d maps (one result or several), named
// elementwise ops, fills, broadcasts of 0-d tensors and empty inits, and
// norms written as reduction generics. The sharded program keeps the form:
// a generic stays one generic (1-D on the flat shard), a named op keeps its
// name. What is not elementwise stays replicated, with a remark naming it.

// RUN: zero-opt %s --split-input-file --zero-shard-weight-update 2>/dev/null | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

zero.mesh @dp(shape = [4])

#id = affine_map<(d0, d1) -> (d0, d1)>
#shared = affine_map<(d0, d1) -> ()>

// One fused generic computing the new momentum and weight, reading a 0-d
// learning rate and a scalar decay: one generic on the shard, with 1-D maps,
// two results, and an empty init of the shard's shape.
// CHECK-LABEL: func.func @fused_momentum
// CHECK-SAME: (%{{.*}}: tensor<2x5xf32>, %{{.*}}: tensor<2x5xf32>, %{{.*}}: tensor<2x5xf32>, %[[LR:.*]]: tensor<f32>, %[[BETA:.*]]: f32)
// CHECK: %[[G:.*]] = zero.reduce_scatter %{{.*}} on @dp reduce = mean : tensor<12xf32> -> tensor<3xf32>
// CHECK-DAG: %[[W:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xf32> -> tensor<3xf32>
// CHECK-DAG: %[[M:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xf32> -> tensor<3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]], #[[ID]], #[[SH:map[0-9]*]], #[[SH2:map[0-9]*]], #[[ID]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[W]], %[[M]], %[[G]], %[[LR]], %[[BETA]] : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, f32) outs(%[[E]], %[[E]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.mulf
// CHECK: -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: zero.all_gather %[[R]]#0 on @dp : tensor<3xf32> -> tensor<12xf32>
// CHECK-DAG: zero.all_gather %[[R]]#1 on @dp : tensor<3xf32> -> tensor<12xf32>
func.func @fused_momentum(%w: tensor<2x5xf32>, %m: tensor<2x5xf32>, %gl: tensor<2x5xf32>, %lr: tensor<f32>, %beta: f32) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<2x5xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #shared, #shared, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m, %g, %lr, %beta : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<f32>, f32)
      outs(%e, %e : tensor<2x5xf32>, tensor<2x5xf32>) {
  ^bb0(%wi: f32, %mi: f32, %gi: f32, %lri: f32, %b: f32, %o0: f32, %o1: f32):
    %md = arith.mulf %mi, %b : f32
    %mn = arith.addf %md, %gi : f32
    %u = arith.mulf %mn, %lri : f32
    %wn = arith.subf %wi, %u : f32
    linalg.yield %wn, %mn : f32, f32
  } -> (tensor<2x5xf32>, tensor<2x5xf32>)
  return %r#0, %r#1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Named elementwise ops keep their names on the shard; a fill of a scalar
// and a broadcast of a 0-d tensor become the same ops on the shard's shape.
// CHECK-LABEL: func.func @named_ops
// CHECK: %[[G:.*]] = zero.reduce_scatter
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[S:.*]] = linalg.mul ins(%[[G]], %[[F]] : tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [0]
// CHECK: %[[D:.*]] = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%[[S]], %[[B]] : tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[W:.*]] = linalg.sub ins(%{{.*}}, %[[D]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: linalg.map { math.sqrt } ins(%[[W]] : tensor<3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: zero.all_gather
func.func @named_ops(%w: tensor<2x5xf32>, %gl: tensor<2x5xf32>, %scale: f32, %lr: tensor<f32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<2x5xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %f = linalg.fill ins(%scale : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %s = linalg.mul ins(%g, %f : tensor<2x5xf32>, tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b = linalg.broadcast ins(%lr : tensor<f32>) outs(%e : tensor<2x5xf32>) dimensions = [0, 1]
  %d = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%s, %b : tensor<2x5xf32>, tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %w2 = linalg.sub ins(%w, %d : tensor<2x5xf32>, tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %r = linalg.map { math.sqrt } ins(%w2 : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>)
  return %w2, %r : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

zero.mesh @dp(shape = [4])

#id = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>

// A norm fused into one reduction generic (linalg-fuse-elementwise-ops makes
// this of squares and their sum): split into the squares and a
// linalg.reduce, then sharded in zero's block order: each rank sums its
// blocks, the partials are all-gathered and combined in order.
// CHECK-LABEL: func.func @fused_norm
// CHECK: %[[G:.*]] = zero.reduce_scatter
// CHECK: linalg.generic {{.*}} ins(%[[G]] : tensor<16xf32>)
// CHECK: arith.mulf
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<1xf32> -> tensor<4xf32>
// CHECK-NOT: zero.all_reduce
// CHECK: return
func.func @fused_norm(%w: tensor<6x10xf32>, %gl: tensor<6x10xf32>) -> (tensor<6x10xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<6x10xf32>
  %e0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %n = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<6x10xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %a: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %w2 = arith.subf %w, %g : tensor<6x10xf32>
  return %w2, %n : tensor<6x10xf32>, tensor<f32>
}

// -----

zero.mesh @dp(shape = [4])

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d1)>

// Not elementwise, so left replicated, each with a remark that names the op
// and why.
// REMARK: linalg.mlir:[[@LINE+5]]:8: remark: left replicated: the gradient is used by 'linalg.generic': operand #0 is read through (d0, d1) -> (d1, d0), neither the element itself nor a 0-d tensor
// CHECK-LABEL: func.func @transposed
// CHECK: zero.all_reduce
// CHECK-NOT: zero.reduce_scatter
func.func @transposed(%w: tensor<4x4xf32>, %gl: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#t, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %b, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

zero.mesh @dp(shape = [4])

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A bias broadcast along rows: each element reads another tensor's element
// by column, not its own.
// REMARK: linalg.mlir:[[@LINE+4]]:8: remark: left replicated: the gradient is used by 'linalg.generic': operand #1 is read through (d0, d1) -> (d1), neither the element itself nor a 0-d tensor
// CHECK-LABEL: func.func @row_broadcast
// CHECK-NOT: zero.reduce_scatter
func.func @row_broadcast(%gl: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

zero.mesh @dp(shape = [4])

#id = affine_map<(d0) -> (d0)>
#col = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// The iteration index, which a shard renumbers, and a reduction along one
// dimension only: both left replicated.
// REMARK: linalg.mlir:[[@LINE+5]]:8: remark: left replicated: the gradient is used by 'linalg.generic': its body reads the iteration index
// REMARK: linalg.mlir:[[@LINE+16]]:8: remark: left replicated: the gradient is used by 'linalg.generic': not all its iterators are parallel
// CHECK-LABEL: func.func @index_and_rows
// CHECK-NOT: zero.reduce_scatter
func.func @index_and_rows(%w: tensor<16xf32>, %gl: tensor<16xf32>, %hl: tensor<4x4xf32>) -> (tensor<16xf32>, tensor<4xf32>) {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %s = arith.mulf %b, %f : f32
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %h = zero.all_reduce %hl on @dp reduce = mean : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#col, #red], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %rows : tensor<16xf32>, tensor<4xf32>
}
