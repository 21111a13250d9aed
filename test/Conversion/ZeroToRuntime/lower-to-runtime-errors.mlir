// RUN: zero-opt %s --zero-lower-to-runtime --split-input-file --verify-diagnostics

zero.mesh @dp(shape = [2])

func.func @tensor_form(%g: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{is still in tensor form; bufferize before zero-lower-to-runtime}}
  %a = zero.all_reduce %g on @dp reduce = sum : tensor<8xf32>
  return %a : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [2])

func.func @no_runtime_dtype(%g: memref<8xi16>) {
  // expected-error @+1 {{cannot be lowered: the runtime has no element type 'i16' (it has f32, bf16, f16, f64, i32, i64 and i8)}}
  zero.all_reduce_buffer %g, %g on @dp reduce = sum : memref<8xi16>, memref<8xi16>
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
  // expected-error @+1 {{cannot be lowered: its request is consumed 0 times; a request is consumed exactly once, by a zero.wait in its block or by the scf.for that carries it}}
  %r = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32> -> !zero.request
  return
}

// -----

zero.mesh @dp(shape = [2])

// A wait in a branch may not run: the request must be waited in its block.
func.func @waited_elsewhere(%in: memref<4xf32>, %out: memref<8xf32>, %c: i1) {
  // expected-error @+1 {{cannot be lowered: its request goes to 'zero.wait' in another block}}
  %r = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32> -> !zero.request
  scf.if %c {
    zero.wait %r, %in, %out : memref<4xf32>, memref<8xf32>
  }
  return
}

// -----

zero.mesh @dp(shape = [2])

// A loop's request that its body waits twice.
func.func @carried_waited_twice(%in: memref<4xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %none = zero.completed_request
  // expected-error @+1 {{cannot be lowered: its request is consumed 2 times}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %none) -> (!zero.request) {
    zero.wait %q, %in, %out : memref<4xf32>, memref<8xf32>
    zero.wait %q, %in, %out : memref<4xf32>, memref<8xf32>
    %q2 = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32> -> !zero.request
    scf.yield %q2 : !zero.request
  }
  zero.wait %r, %in, %out : memref<4xf32>, memref<8xf32>
  return
}

// -----

zero.mesh @dp(shape = [2])

// Buffers must be contiguous: zero-contiguous-collective-buffers stages those
// that are not.
func.func @strided(%in: memref<4x4xf32, strided<[8, 1]>>, %out: memref<4x4xf32>) {
  // expected-error @+1 {{cannot be lowered: 'memref<4x4xf32, strided<[8, 1]>>' is not contiguous (zero-contiguous-collective-buffers stages such buffers through dense ones)}}
  zero.all_reduce_buffer %in, %out on @dp reduce = sum
      : memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32>
  return
}

// -----

zero.mesh @dp(shape = [2])

func.func @all_to_all_in_place(%q: memref<4xi8>) {
  // expected-error @+1 {{cannot be lowered: an all-to-all cannot run in place (its input is its output)}}
  zero.all_to_all_buffer %q, %q on @dp : memref<4xi8>, memref<4xi8>
  return
}
