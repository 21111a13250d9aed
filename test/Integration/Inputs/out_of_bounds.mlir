// A program that writes past the end of its tensor: its loop runs 4 times
// over a tensor of 2 elements. Undefined behaviour in the program itself.
func.func @step(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> tensor<2xf32> {
    %u = tensor.insert %one into %t[%i] : tensor<2xf32>
    scf.yield %u : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
