// One device's SGD step of a linear model, for the whole batch of 24: the
// batch (x, its transpose, the targets y) is annotated to be split over the
// grid; upstream sharding-propagation and shard-partition make of it the
// data-parallel step, each rank on its part of the batch, with the weight
// gradient all-reduced. zero-data-parallel runs that flow and then zero's
// sharding of the update; zero-run runs the result on the grid's ranks and
// compares it with this program run on one rank on the whole batch:
//
//   zero-run examples/one_device_sgd.mlir --passes=zero-data-parallel \
//     --per-rank 1,2,3 --range 0=1:2 \
//     --reference examples/one_device_sgd.mlir --max-ulp 1
shard.grid @grid(shape = 4)

func.func @step(%w: tensor<6x3xf32>, %x: tensor<24x6xf32>,
                %xt: tensor<6x24xf32>, %y: tensor<24x3xf32>)
    -> tensor<6x3xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<24x6xf32>
  %ys = shard.shard %y to %rows : tensor<24x3xf32>
  %xts = shard.shard %xt to %cols : tensor<6x24xf32>
  %zero = arith.constant 0.0 : f32
  // Forward: p = x w; the loss's gradient with respect to p: p - y.
  %e = tensor.empty() : tensor<24x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<24x3xf32>) -> tensor<24x3xf32>
  %p = linalg.matmul ins(%xs, %w : tensor<24x6xf32>, tensor<6x3xf32>)
                     outs(%f : tensor<24x3xf32>) -> tensor<24x3xf32>
  %d = arith.subf %p, %ys : tensor<24x3xf32>
  // Backward: the weight's gradient x^T d, summed over the batch.
  %eg = tensor.empty() : tensor<6x3xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<6x3xf32>) -> tensor<6x3xf32>
  %g = linalg.matmul ins(%xts, %d : tensor<6x24xf32>, tensor<24x3xf32>)
                     outs(%fg : tensor<6x3xf32>) -> tensor<6x3xf32>
  // SGD.
  %lr = arith.constant dense<0.01> : tensor<6x3xf32>
  %u = arith.mulf %g, %lr : tensor<6x3xf32>
  %w2 = arith.subf %w, %u : tensor<6x3xf32>
  return %w2 : tensor<6x3xf32>
}
