// zero-expand-loop-futures fails, at the op, on a loop-carried future it
// cannot give buffers.

// RUN: zero-opt %s --split-input-file --zero-expand-loop-futures --verify-diagnostics -o /dev/null

zero.mesh @dp(shape = [4])

// The body reads the awaited value after starting the next gather into the
// same buffer.
func.func @read_after_start(%w0: tensor<16xf32>, %s0: tensor<4xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f0 = zero.ready %w0 : tensor<16xf32>
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %f = %f0, %t = %w0) -> (tensor<4xf32>, !zero.future<tensor<16xf32>>, tensor<16xf32>) {
    %w = zero.await %f : !zero.future<tensor<16xf32>>
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    // expected-note @+1 {{the collective starts here}}
    %f2 = zero.async : !zero.future<tensor<16xf32>> {
      %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
      zero.yield %g : tensor<16xf32>
    }
    // expected-error @+1 {{reads the value of a loop-carried future after the next iteration's collective starts writing its buffer}}
    %t2 = arith.addf %t, %w : tensor<16xf32>
    scf.yield %s2, %f2, %t2 : tensor<4xf32>, !zero.future<tensor<16xf32>>, tensor<16xf32>
  }
  %wl = zero.await %r#1 : !zero.future<tensor<16xf32>>
  return %wl : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The first value is neither ready nor started for this loop.
func.func @unknown_first(%f0: !zero.future<tensor<16xf32>>, %s0: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{carries a future whose first value is neither a zero.ready nor a zero.async of its own}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%f = %f0) -> (!zero.future<tensor<16xf32>>) {
    %w = zero.await %f : !zero.future<tensor<16xf32>>
    %f2 = zero.async : !zero.future<tensor<16xf32>> {
      %g = zero.all_gather %s0 on @dp : tensor<4xf32> -> tensor<16xf32>
      zero.yield %g : tensor<16xf32>
    }
    scf.yield %f2 : !zero.future<tensor<16xf32>>
  }
  return
}

// -----

zero.mesh @dp(shape = [4])

// Awaited after the next collective started: the wait would block on the
// wrong request.
func.func @await_after_start(%w0: tensor<16xf32>, %s0: tensor<4xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f0 = zero.ready %w0 : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %f = %f0) -> (tensor<4xf32>, !zero.future<tensor<16xf32>>) {
    %s2 = arith.addf %s, %s : tensor<4xf32>
    %f2 = zero.async : !zero.future<tensor<16xf32>> {
      %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
      zero.yield %g : tensor<16xf32>
    }
    // expected-error @+1 {{must come before the zero.async that starts the next iteration's collective}}
    %w = zero.await %f : !zero.future<tensor<16xf32>>
    scf.yield %s2, %f2 : tensor<4xf32>, !zero.future<tensor<16xf32>>
  }
  %wl = zero.await %r#1 : !zero.future<tensor<16xf32>>
  return %wl : tensor<16xf32>
}
