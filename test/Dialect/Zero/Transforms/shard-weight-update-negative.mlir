// Gradients the pass must leave replicated, each with a remark saying why.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=min-bytes=64 --verify-diagnostics | FileCheck %s

zero.mesh @dp(shape = [4])

// The gradient also feeds something that is not the update.
// CHECK-LABEL: func.func @gradient_used_elsewhere
// CHECK: zero.all_reduce
// CHECK-NOT: zero.reduce_scatter
func.func @gradient_used_elsewhere(%w: tensor<64xf32>, %gl: tensor<64xf32>, %i: index)
    -> (tensor<64xf32>, f32) {
  // expected-remark @+1 {{left replicated: the gradient is used by 'tensor.extract': it is not elementwise update code}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<64xf32>
  %w2 = arith.subf %w, %g : tensor<64xf32>
  %n = tensor.extract %g[%i] : tensor<64xf32>
  return %w2, %n : tensor<64xf32>, f32
}

// -----

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @dynamic_shape
// CHECK: zero.all_reduce
func.func @dynamic_shape(%w: tensor<?xf32>, %gl: tensor<?xf32>) -> tensor<?xf32> {
  // expected-remark @+1 {{left replicated: its shape is not static}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<?xf32>
  %w2 = arith.subf %w, %g : tensor<?xf32>
  return %w2 : tensor<?xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A 0-d all-reduce (a loss) is not a gradient: left as it is, without a
// remark (--verify-diagnostics fails on an unexpected one).
// CHECK-LABEL: func.func @scalar
// CHECK: zero.all_reduce
func.func @scalar(%w: tensor<f32>, %gl: tensor<f32>) -> tensor<f32> {
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<f32>
  %w2 = arith.subf %w, %g : tensor<f32>
  return %w2 : tensor<f32>
}

// -----

zero.mesh @dp(shape = [4])

// No elements: nothing to shard (and the all-reduce folds away).
// CHECK-LABEL: func.func @no_elements
// CHECK: zero.all_reduce
func.func @no_elements(%w: tensor<0xf32>, %gl: tensor<0xf32>) -> tensor<0xf32> {
  // expected-remark @+1 {{left replicated: it has no elements}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<0xf32>
  %w2 = arith.subf %w, %g : tensor<0xf32>
  return %w2 : tensor<0xf32>
}

// -----

zero.mesh @hybrid(shape = [1, 4])

// CHECK-LABEL: func.func @group_of_one
// CHECK: zero.all_reduce
func.func @group_of_one(%w: tensor<64xf32>, %gl: tensor<64xf32>) -> tensor<64xf32> {
  // expected-remark @+1 {{left replicated: its group has one rank}}
  %g = zero.all_reduce %gl on @hybrid axes = [0] reduce = sum : tensor<64xf32>
  %w2 = arith.subf %w, %g : tensor<64xf32>
  return %w2 : tensor<64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// 8 f32 = 32 bytes, under min-bytes=64.
// CHECK-LABEL: func.func @tiny
// CHECK: zero.all_reduce
func.func @tiny(%w: tensor<8xf32>, %gl: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @+1 {{left replicated: it is smaller than min-bytes=64}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
  %w2 = arith.subf %w, %g : tensor<8xf32>
  return %w2 : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The update continues in a nested region.
// CHECK-LABEL: func.func @nested_region
// CHECK: zero.all_reduce
func.func @nested_region(%w: tensor<64xf32>, %gl: tensor<64xf32>, %c: i1) -> tensor<64xf32> {
  // expected-remark @+1 {{left replicated: the gradient reaches 'arith.subf' in another block}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<64xf32>
  %r = scf.if %c -> tensor<64xf32> {
    %w2 = arith.subf %w, %g : tensor<64xf32>
    scf.yield %w2 : tensor<64xf32>
  } else {
    scf.yield %w : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A plain all-reduce with no update: nothing to shard.
// CHECK-LABEL: func.func @no_update
// CHECK: zero.all_reduce
func.func @no_update(%gl: tensor<64xf32>) -> tensor<64xf32> {
  // expected-remark @+1 {{left replicated: no update code uses the gradient}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<64xf32>
  return %g : tensor<64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// An update that reads a matmul of the gradient is not elementwise.
// CHECK-LABEL: func.func @not_elementwise
// CHECK: zero.all_reduce
func.func @not_elementwise(%w: tensor<8x8xf32>, %gl: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark @+1 {{left replicated: the gradient is used by 'linalg.matmul': not all its iterators are parallel}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8x8xf32>
  %p = linalg.matmul ins(%g, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%w : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p : tensor<8x8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// An all-reduce already scheduled inside zero.async is not touched.
// CHECK-LABEL: func.func @async_untouched
// CHECK: zero.async
// CHECK: zero.all_reduce
func.func @async_untouched(%w: tensor<64xf32>, %gl: tensor<64xf32>) -> tensor<64xf32> {
  %f = zero.async : !zero.future<tensor<64xf32>> {
    %g = zero.all_reduce %gl on @dp reduce = sum : tensor<64xf32>
    zero.yield %g : tensor<64xf32>
  }
  %g = zero.await %f reads %gl : !zero.future<tensor<64xf32>>, tensor<64xf32>
  %w2 = arith.subf %w, %g : tensor<64xf32>
  return %w2 : tensor<64xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A reduction along only some dimensions (a per-row norm) is not a full
// reduction: its result is not one value the partials of blocks rebuild.
// CHECK-LABEL: func.func @row_reduction
// CHECK: zero.all_reduce
// CHECK-NOT: zero.reduce_scatter
func.func @row_reduction(%w: tensor<8x8xf32>, %gl: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{left replicated: the gradient reaches a 'linalg.reduce' that is not a full reduction with one associative combiner of known identity}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8x8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %rows = linalg.reduce ins(%g : tensor<8x8xf32>) outs(%init : tensor<8xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %w2 = arith.subf %w, %g : tensor<8x8xf32>
  return %w2, %rows : tensor<8x8xf32>, tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A difference is not associative: no order of blocks gives its result.
// CHECK-LABEL: func.func @difference_reduction
// CHECK: zero.all_reduce
// CHECK-NOT: zero.reduce_scatter
func.func @difference_reduction(%w: tensor<64xf32>, %gl: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %one = arith.constant 1.0 : f32
  // expected-remark @+1 {{left replicated: the gradient reaches a 'linalg.reduce' that is not a full reduction}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<64xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %p = linalg.reduce ins(%g : tensor<64xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.subf %acc, %x : f32
      linalg.yield %s : f32
    }
  %w2 = arith.subf %w, %g : tensor<64xf32>
  return %w2, %p : tensor<64xf32>, tensor<f32>
}
