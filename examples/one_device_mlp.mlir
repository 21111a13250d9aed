// One device's training step of a two-layer MLP (ReLU, squared error, SGD)
// for the whole batch of 24. The batch and the activations computed from it
// are annotated with shard.shard to be split over the grid (upstream
// sharding-propagation of MLIR 22 needs the activations named; left to it,
// shard-partition crashes on them). zero-data-parallel partitions it (each
// rank on its part of the batch, both weight gradients all-reduced) and
// shards the updates; zero-run compares with this program on one rank:
//
//   zero-run examples/one_device_mlp.mlir --passes=zero-data-parallel \
//     --per-rank 2,3 --range 0=1:2 --range 1=1:2 --range 2=-0.1:0.1 \
//     --range 3=-0.1:0.1 --reference examples/one_device_mlp.mlir --max-ulp 1
//
// The partitioned matmuls sum the batch in N parts, then the parts in rank
// order; one device sums it in one sequence. With the weights in [1, 2) and
// the data small, that moves no new weight by more than one ulp.
shard.grid @grid(shape = 4)

#id = affine_map<(i, j) -> (i, j)>
// Contractions over the batch: (a^T b)[m, n] = sum_k a[k, m] b[k, n].
#bt_a = affine_map<(m, n, k) -> (k, m)>
#bt_b = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
// d w^T: [m, n] = sum_k d[m, k] w[n, k].
#nt_a = affine_map<(m, n, k) -> (m, k)>
#nt_b = affine_map<(m, n, k) -> (n, k)>

func.func @step(%w1: tensor<6x8xf32>, %w2: tensor<8x3xf32>,
                %x: tensor<24x6xf32>, %y: tensor<24x3xf32>)
    -> (tensor<6x8xf32>, tensor<8x3xf32>) {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<24x6xf32>
  %ys = shard.shard %y to %rows : tensor<24x3xf32>
  %zero = arith.constant 0.0 : f32

  // Forward: a = x w1, h = relu(a), p = h w2.
  %e_a = tensor.empty() : tensor<24x8xf32>
  %f_a = linalg.fill ins(%zero : f32) outs(%e_a : tensor<24x8xf32>) -> tensor<24x8xf32>
  %a0 = linalg.matmul ins(%xs, %w1 : tensor<24x6xf32>, tensor<6x8xf32>)
                      outs(%f_a : tensor<24x8xf32>) -> tensor<24x8xf32>
  %a = shard.shard %a0 to %rows : tensor<24x8xf32>
  %e_h = tensor.empty() : tensor<24x8xf32>
  %h0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<24x8xf32>) outs(%e_h : tensor<24x8xf32>) {
  ^bb0(%ai: f32, %o: f32):
    %r = arith.maximumf %ai, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x8xf32>
  %h = shard.shard %h0 to %rows : tensor<24x8xf32>
  %e_p = tensor.empty() : tensor<24x3xf32>
  %f_p = linalg.fill ins(%zero : f32) outs(%e_p : tensor<24x3xf32>) -> tensor<24x3xf32>
  %p = linalg.matmul ins(%h, %w2 : tensor<24x8xf32>, tensor<8x3xf32>)
                     outs(%f_p : tensor<24x3xf32>) -> tensor<24x3xf32>

  // Backward of 0.5 |p - y|^2: d = p - y; g2 = h^T d; dh = (d w2^T) where
  // a > 0; g1 = x^T dh.
  %d0 = arith.subf %p, %ys : tensor<24x3xf32>
  %d = shard.shard %d0 to %rows : tensor<24x3xf32>
  %e_g2 = tensor.empty() : tensor<8x3xf32>
  %f_g2 = linalg.fill ins(%zero : f32) outs(%e_g2 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %g2 = linalg.matmul indexing_maps = [#bt_a, #bt_b, #out]
      ins(%h, %d : tensor<24x8xf32>, tensor<24x3xf32>)
      outs(%f_g2 : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e_dh = tensor.empty() : tensor<24x8xf32>
  %f_dh = linalg.fill ins(%zero : f32) outs(%e_dh : tensor<24x8xf32>) -> tensor<24x8xf32>
  %dh0 = linalg.matmul indexing_maps = [#nt_a, #nt_b, #out]
      ins(%d, %w2 : tensor<24x3xf32>, tensor<8x3xf32>)
      outs(%f_dh : tensor<24x8xf32>) -> tensor<24x8xf32>
  %dh1 = shard.shard %dh0 to %rows : tensor<24x8xf32>
  %e_m = tensor.empty() : tensor<24x8xf32>
  %dh2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %dh1 : tensor<24x8xf32>, tensor<24x8xf32>) outs(%e_m : tensor<24x8xf32>) {
  ^bb0(%ai: f32, %di: f32, %o: f32):
    %pos = arith.cmpf ogt, %ai, %zero : f32
    %r = arith.select %pos, %di, %zero : f32
    linalg.yield %r : f32
  } -> tensor<24x8xf32>
  %dh = shard.shard %dh2 to %rows : tensor<24x8xf32>
  %e_g1 = tensor.empty() : tensor<6x8xf32>
  %f_g1 = linalg.fill ins(%zero : f32) outs(%e_g1 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %g1 = linalg.matmul indexing_maps = [#bt_a, #bt_b, #out]
      ins(%xs, %dh : tensor<24x6xf32>, tensor<24x8xf32>)
      outs(%f_g1 : tensor<6x8xf32>) -> tensor<6x8xf32>

  // SGD.
  %lr1 = arith.constant dense<0.01> : tensor<6x8xf32>
  %lr2 = arith.constant dense<0.01> : tensor<8x3xf32>
  %u1 = arith.mulf %g1, %lr1 : tensor<6x8xf32>
  %u2 = arith.mulf %g2, %lr2 : tensor<8x3xf32>
  %w1n = arith.subf %w1, %u1 : tensor<6x8xf32>
  %w2n = arith.subf %w2, %u2 : tensor<8x3xf32>
  return %w1n, %w2n : tensor<6x8xf32>, tensor<8x3xf32>
}
