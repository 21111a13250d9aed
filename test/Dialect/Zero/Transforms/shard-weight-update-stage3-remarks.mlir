// zero-shard-weight-update at stage 3 says where it cannot keep weights
// sharded between steps.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=stage=3 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update="stage=3 shard-function-boundary" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOUNDARY

zero.mesh @dp(shape = [4])

// A single step without shard-function-boundary: the weights enter and leave
// whole, so the step runs as stage 2, once said for the function.
// WHOLE: remarks.mlir:[[@LINE+3]]:1: remark: stage 3 is stage 2 for 2 weight update(s) here: their weights enter and leave whole, being neither carried by an scf.for nor arguments sharded at the function boundary (shard-function-boundary)
// With the option both weights are shards at the boundary: no remark.
// BOUNDARY-NOT: remarks.mlir:[[@LINE+1]]:1: remark
func.func @step(%w: tensor<10xf32>, %gl: tensor<10xf32>, %v: tensor<10xf32>, %hl: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>) {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  %h = zero.all_reduce %hl on @dp reduce = mean : tensor<10xf32>
  %v2 = arith.subf %v, %h : tensor<10xf32>
  return %w2, %v2 : tensor<10xf32>, tensor<10xf32>
}

// -----

zero.mesh @dp(shape = [4])

// With shard-function-boundary the master weight pairs with its argument;
// the bf16 model copy the step returns pairs with none, so it leaves whole.
// WHOLE: remarks.mlir:[[@LINE+2]]:1: remark: stage 3 is stage 2 for 1 weight update(s) here
// BOUNDARY: remarks.mlir:[[@LINE+4]]:8: remark: stage 3: result #1 is returned whole, so the caller holds it whole between steps: it pairs with no argument that the update reads
func.func @copy_step(%w: tensor<10xf32>, %gl: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xbf16>) {
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  %c = arith.truncf %w2 : tensor<10xf32> to tensor<10xbf16>
  return %w2, %c : tensor<10xf32>, tensor<10xbf16>
}
