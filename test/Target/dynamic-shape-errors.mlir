// A collective of dynamic shape is valid IR but not something zero's runtime
// moves: both lowerings stop at it with an error on the op, not with invalid
// IR later in bufferization.
// RUN: zero-opt %s --zero-to-llvm --verify-diagnostics -o /dev/null
// RUN: zero-opt %s --zero-to-nvvm=gpu-format=isa --verify-diagnostics -o /dev/null

zero.mesh @dp(shape = [4])

func.func @dynamic_shape(%w: tensor<?xf32>, %gl: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+2 {{zero lowers collectives of static shape only, not 'tensor<?xf32>'}}
  // expected-error @+1 {{failed to bufferize op}}
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<?xf32>
  %w2 = arith.subf %w, %g : tensor<?xf32>
  return %w2 : tensor<?xf32>
}
