// Rank 2 all-reduces half as many elements as the others.
zero.mesh @dp(shape = [4])

func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %i = zero.replica_index on @dp : index
  %c2 = arith.constant 2 : index
  %is2 = arith.cmpi eq, %i, %c2 : index
  %r = scf.if %is2 -> tensor<8xf32> {
    %half = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    %sum = zero.all_reduce %half on @dp reduce = sum : tensor<4xf32>
    %back = tensor.insert_slice %sum into %x[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
    scf.yield %back : tensor<8xf32>
  } else {
    %sum = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
    scf.yield %sum : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
