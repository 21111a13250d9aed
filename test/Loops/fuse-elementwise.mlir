// zero-fuse-elementwise: an elementwise web becomes one loop nest, also where
// a result has uses after its consumer (it becomes an extra result); a
// producer used before its consumer is left alone, so nothing is computed
// twice.

// RUN: zero-opt %s --split-input-file --convert-elementwise-to-linalg --zero-fuse-elementwise | FileCheck %s

// AdamW's update of one shard: both moments and the weight, each read once,
// in one loop nest with three results.
// CHECK-LABEL: func.func @adamw_web
// CHECK-SAME: (%[[W:[^:]*]]: tensor<64xf32>, %[[M:[^:]*]]: tensor<64xf32>, %[[V:[^:]*]]: tensor<64xf32>, %[[G:[^:]*]]: tensor<64xf32>)
// CHECK: %[[R:.*]]:3 = linalg.generic
// CHECK-SAME: ins(%[[W]], %[[M]], %[[G]], %[[V]] :
// CHECK: math.sqrt
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#2, %[[R]]#1, %[[R]]#0
func.func @adamw_web(%w: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>, %g: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %b1 = arith.constant dense<0.9> : tensor<64xf32>
  %c1 = arith.constant dense<0.1> : tensor<64xf32>
  %b2 = arith.constant dense<0.999> : tensor<64xf32>
  %c2 = arith.constant dense<0.001> : tensor<64xf32>
  %eps = arith.constant dense<1.0e-8> : tensor<64xf32>
  %lr = arith.constant dense<0.001> : tensor<64xf32>
  %ma = arith.mulf %m, %b1 : tensor<64xf32>
  %mb = arith.mulf %g, %c1 : tensor<64xf32>
  %m2 = arith.addf %ma, %mb : tensor<64xf32>
  %va = arith.mulf %v, %b2 : tensor<64xf32>
  %gg = arith.mulf %g, %g : tensor<64xf32>
  %vb = arith.mulf %gg, %c2 : tensor<64xf32>
  %v2 = arith.addf %va, %vb : tensor<64xf32>
  %s = math.sqrt %v2 : tensor<64xf32>
  %den = arith.addf %s, %eps : tensor<64xf32>
  %u = arith.divf %m2, %den : tensor<64xf32>
  %d = arith.mulf %u, %lr : tensor<64xf32>
  %w2 = arith.subf %w, %d : tensor<64xf32>
  return %w2, %m2, %v2 : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// The new weight and its bf16 copy: one loop nest, two results.
// CHECK-LABEL: func.func @bf16_copy
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: arith.truncf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @bf16_copy(%w: tensor<64xf32>, %g: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xbf16>) {
  %w2 = arith.subf %w, %g : tensor<64xf32>
  %b = arith.truncf %w2 : tensor<64xf32> to tensor<64xbf16>
  return %w2, %b : tensor<64xf32>, tensor<64xbf16>
}

// -----

// The producer's result is also read before its consumer: fusing would
// compute it twice, so the two loop nests stay.
// CHECK-LABEL: func.func @used_before
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK: linalg.generic
func.func @used_before(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, f32) {
  %c0 = arith.constant 0 : index
  %s = arith.addf %a, %b : tensor<64xf32>
  %x = tensor.extract %s[%c0] : tensor<64xf32>
  %p = arith.mulf %s, %b : tensor<64xf32>
  return %p, %x : tensor<64xf32>, f32
}

// -----

// A reduction does not fuse with its elementwise producer's other readers
// (it is not elementwise); the elementwise ops still fuse with each other.
// CHECK-LABEL: func.func @with_reduction
// CHECK: %[[E:.*]]:2 = linalg.generic
// CHECK: linalg.reduce ins(%[[E]]#
func.func @with_reduction(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %s = arith.mulf %a, %b : tensor<64xf32>
  %t = arith.addf %s, %a : tensor<64xf32>
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.reduce ins(%s : tensor<64xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %y = arith.addf %in, %acc : f32
      linalg.yield %y : f32
    }
  return %t, %n : tensor<64xf32>, tensor<f32>
}

// -----

// A splat of a scalar computed at run time (Adam's bias correction) is read
// as the scalar inside the loop nest, not materialized as a tensor by a loop
// nest of its own.
// CHECK-LABEL: func.func @splat_scalar
// CHECK-SAME: (%[[M:[^:]*]]: tensor<64xf32>, %[[T:[^:]*]]: f32)
// CHECK: %[[C:.*]] = arith.divf
// CHECK-NOT: tensor.splat
// CHECK: linalg.generic {{.*}} ins(%[[M]] : tensor<64xf32>)
// CHECK: arith.mulf %{{.*}}, %[[C]] : f32
func.func @splat_scalar(%m: tensor<64xf32>, %t: f32) -> tensor<64xf32> {
  %one = arith.constant 1.0 : f32
  %c = arith.divf %one, %t : f32
  %cs = tensor.splat %c : tensor<64xf32>
  %mh = arith.mulf %m, %cs : tensor<64xf32>
  return %mh : tensor<64xf32>
}

// -----

// A reshape between two elementwise ops folds into the loop nests, which
// then fuse into one.
// CHECK-LABEL: func.func @reshape_between_elementwise
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @reshape_between_elementwise(%a: tensor<4x8xf32>) -> tensor<32xf32> {
  %s = arith.mulf %a, %a : tensor<4x8xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %t = arith.addf %c, %c : tensor<32xf32>
  return %t : tensor<32xf32>
}

// -----

// A convolution's weight collapsed to rows x features and read by a matmul
// (x W^T), and its gradient expanded back: the reshapes stay outside the
// matmuls, which stay two-dimensional GEMMs (zero-gemm-calls), rather than
// becoming contractions over the weight's four dimensions.
#xk = affine_map<(m, n, k) -> (m, k)>
#wnk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @convolution_weight
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x3x3x3xf32> into tensor<16x27xf32>
// CHECK: linalg.matmul indexing_maps
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<8x27xf32>, tensor<16x27xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x8xf32>, tensor<8x27xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] output_shape [16, 3, 3, 3]
func.func @convolution_weight(%w: tensor<16x3x3x3xf32>, %x: tensor<8x27xf32>, %dzt: tensor<16x8xf32>)
    -> (tensor<8x16xf32>, tensor<16x3x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %fw = tensor.collapse_shape %w [[0], [1, 2, 3]] : tensor<16x3x3x3xf32> into tensor<16x27xf32>
  %ze = tensor.empty() : tensor<8x16xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%ze : tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = linalg.matmul indexing_maps = [#xk, #wnk, #mn] ins(%x, %fw : tensor<8x27xf32>, tensor<16x27xf32>) outs(%zf : tensor<8x16xf32>) -> tensor<8x16xf32>
  %ge = tensor.empty() : tensor<16x27xf32>
  %gf = linalg.fill ins(%zero : f32) outs(%ge : tensor<16x27xf32>) -> tensor<16x27xf32>
  %gw = linalg.matmul ins(%dzt, %x : tensor<16x8xf32>, tensor<8x27xf32>) outs(%gf : tensor<16x27xf32>) -> tensor<16x27xf32>
  %gl = tensor.expand_shape %gw [[0], [1, 2, 3]] output_shape [16, 3, 3, 3] : tensor<16x27xf32> into tensor<16x3x3x3xf32>
  return %z, %gl : tensor<8x16xf32>, tensor<16x3x3x3xf32>
}
