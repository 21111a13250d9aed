// zero-order-reductions: every full reduction (a linalg.reduce of every
// dimension into a 0-d value) in zero's one order: blocks of B elements in
// index order, each combined from the identity, then the init and the
// partials in index order, into a new 0-d tensor.

// RUN: zero-opt %s --split-input-file --zero-order-reductions | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-order-reductions 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// 1000000 elements: blocks of 4096 (the largest block), 245 of them, the
// last padded with 3520 elements of -0.0, the additive identity. The partials'
// loop over blocks is the outer, parallel one (one GPU thread a block); the
// combine is one parallel iteration around the sequential walk over the
// partials, starting from the init, into a fresh tensor.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUTER:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1000000xf32>, %[[INIT:[^:]*]]: tensor<f32>)
// CHECK: %[[NEG:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0] high[3520]
// CHECK: tensor.yield %[[NEG]]
// CHECK: %[[G:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [245, 4096]
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<245xf32>)
// CHECK: %[[PART:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[OUTER]]], iterator_types = ["parallel", "reduction"]} ins(%[[G]] : tensor<245x4096xf32>) outs(%[[F]] : tensor<245xf32>)
// CHECK:   arith.addf
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[PART]] {{\[\[}}0, 1]] output_shape [1, 245]
// CHECK: %[[START:.*]] = tensor.expand_shape %[[INIT]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[FRESH:.*]] = tensor.empty() : tensor<1xf32>
// CHECK: %[[TOT:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[OUTER]], #[[OUTER]]], iterator_types = ["parallel", "reduction"]} ins(%[[ROW]], %[[START]] : tensor<1x245xf32>, tensor<1xf32>) outs(%[[FRESH]] : tensor<1xf32>)
// CHECK:   %[[K:.*]] = linalg.index 1 : index
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : index
// CHECK:   %[[ACC:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:   arith.addf %{{.*}}, %[[ACC]] : f32
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[TOT]] [] : tensor<1xf32> into tensor<f32>
// CHECK: return %[[R]]
// CHECK-NOT: linalg.reduce
func.func @sum_of_squares(%x: tensor<1000000xf32>, %init: tensor<f32>) -> tensor<f32> {
  %n = linalg.reduce ins(%x : tensor<1000000xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// -----

// A chain of reductions, a global norm summed parameter by parameter: each
// combine starts from the last one's result and writes a new tensor, so the
// chain is one of small separate buffers, not one buffer written in place.
// 3000 elements: the block is 64 (the power of two that makes at most 64
// blocks), 47 blocks; 10 elements fit one block (of at least 16), unpadded.
// CHECK-LABEL: func.func @chain
// CHECK: output_shape [47, 64]
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<1xf32>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[FIRST]] []
// CHECK-NOT: tensor.pad
// CHECK: output_shape [1, 10]
// CHECK: %[[NEXT:.*]] = tensor.expand_shape %[[A]] [] output_shape [1]
// CHECK: %[[FRESH:.*]] = tensor.empty() : tensor<1xf32>
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[NEXT]] : tensor<1x1xf32>, tensor<1xf32>) outs(%[[FRESH]] : tensor<1xf32>)
func.func @chain(%x: tensor<3000xf32>, %y: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %a = linalg.reduce ins(%x : tensor<3000xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %b = linalg.reduce ins(%y : tensor<10xf32>) outs(%a : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %b : tensor<f32>
}

// -----

// A reduction over every dimension of a 2-D tensor (loss scaling's check
// that every gradient is finite) is one over its elements in row-major
// order: flattened, then blocked as above; `true` is the identity of `and`.
// CHECK-LABEL: func.func @all_finite
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<70x130xi1> into tensor<9100xi1>
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: tensor.pad %[[FLAT]] low[0] high[116]
// CHECK: tensor.yield %[[TRUE]] : i1
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<36x256xi1>) outs(%{{.*}} : tensor<36xi1>)
// CHECK: arith.andi
func.func @all_finite(%x: tensor<70x130xi1>, %init: tensor<i1>) -> tensor<i1> {
  %all = linalg.reduce ins(%x : tensor<70x130xi1>) outs(%init : tensor<i1>) dimensions = [0, 1]
    (%in: i1, %acc: i1) {
      %both = arith.andi %in, %acc : i1
      linalg.yield %both : i1
    }
  return %all : tensor<i1>
}

// -----

// Every combiner of known identity: the maximum's is -inf, the product's 1,
// the unsigned minimum's all ones.
// CHECK-LABEL: func.func @identities
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.mulf
// CHECK: arith.constant -1 : i32
// CHECK: arith.minui
// CHECK-NOT: linalg.reduce
func.func @identities(%x: tensor<2000xf32>, %i: tensor<2000xi32>, %init: tensor<f32>, %initi: tensor<i32>) -> (tensor<f32>, tensor<f32>, tensor<i32>) {
  %m = linalg.reduce ins(%x : tensor<2000xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  %p = linalg.reduce ins(%x : tensor<2000xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.mulf %in, %acc : f32
      linalg.yield %s : f32
    }
  %u = linalg.reduce ins(%i : tensor<2000xi32>) outs(%initi : tensor<i32>) dimensions = [0]
    (%in: i32, %acc: i32) {
      %s = arith.minui %in, %acc : i32
      linalg.yield %s : i32
    }
  return %m, %p, %u : tensor<f32>, tensor<f32>, tensor<i32>
}

// -----

// A combiner zero does not know (a sum of squares inside the combiner) keeps
// the order its lowering gives, with a remark; a reduction that keeps a
// dimension is not a full reduction and is left alone silently.
// REMARK: remark: left in the order its lowering gives: the combiner is not one associative operation zero knows
// CHECK-LABEL: func.func @unknown_combiner
// CHECK: linalg.reduce ins(%{{.*}} : tensor<10xf32>)
// CHECK-NOT: linalg.generic
func.func @unknown_combiner(%x: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %n = linalg.reduce ins(%x : tensor<10xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// -----

// REMARK: remark: left in the order its lowering gives: zero orders full reductions of tensors of static shape
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.reduce ins(%{{.*}} : tensor<?xf32>)
func.func @dynamic(%x: tensor<?xf32>, %init: tensor<f32>) -> tensor<f32> {
  %n = linalg.reduce ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// -----

// REMARK-NOT: remark
// CHECK-LABEL: func.func @rows
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
func.func @rows(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %n = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<4xf32>
}
