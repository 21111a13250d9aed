// RUN: zero-opt %s --zero-lower-to-runtime --split-input-file --verify-diagnostics

zero.mesh @dp(shape = [2])

func.func @tensor_form(%g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{is still in tensor form; bufferize before zero-lower-to-runtime}}
  %a = zero.all_reduce %g on @dp reduce = sum : tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [2])

func.func @no_runtime_dtype(%g: memref<8xi8>) {
  // expected-error @+1 {{cannot be lowered: the runtime has no element type 'i8'}}
  zero.all_reduce_buffer %g, %g on @dp reduce = sum : memref<8xi8>, memref<8xi8>
  return
}

// -----

zero.mesh @dp(shape = [2])

func.func @parts_not_contiguous(%g: memref<4x8xf32>, %s: memref<4x4xf32>) {
  // expected-error @+1 {{cannot be lowered: splitting dimension 1 of 'memref<4x8xf32>' gives parts that are not contiguous}}
  zero.reduce_scatter_buffer %g, %s on @dp reduce = sum dim = 1
      : memref<4x8xf32>, memref<4x4xf32>
  return
}

// -----

zero.mesh @dp(shape = [2])

func.func @async(%g: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'zero.async' op is still in tensor form; bufferize before zero-lower-to-runtime (zero-to-llvm does)}}
  %f = zero.async : !zero.future<tensor<4xf32>> {
    %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<8xf32> -> tensor<4xf32>
    zero.yield %s : tensor<4xf32>
  }
  // expected-error @+1 {{'zero.await' op is still in tensor form; bufferize before zero-lower-to-runtime (zero-to-llvm does)}}
  %v = zero.await %f reads %g : !zero.future<tensor<4xf32>>, tensor<8xf32>
  return %v : tensor<4xf32>
}

// -----

zero.mesh @dp(shape = [2])

func.func @never_waited(%in: memref<4xf32>, %out: memref<8xf32>) {
  // expected-error @+1 {{cannot be lowered: its request is waited 0 times; exactly once}}
  %r = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32> -> !zero.request
  return
}

// -----

zero.mesh @dp(shape = [2])

func.func @waited_elsewhere(%in: memref<4xf32>, %out: memref<8xf32>, %c: i1) {
  %r = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32> -> !zero.request
  scf.if %c {
    // expected-error @+1 {{cannot be lowered: a request is consumed only by zero.wait ops in the block of its collective}}
    zero.wait %r, %in, %out : memref<4xf32>, memref<8xf32>
  }
  return
}
