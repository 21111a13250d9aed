// zero-defer-all-gather{gather-dtype=int8}: the copy the forward pass reads
// travels as int8 blocks of this rank's shard with an f32 scale each (qwZ),
// dequantized on arrival into the type the readers read; the carried fp32
// shard stays exact, and the caller gets it gathered exactly.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather='gather-dtype=int8 quantize-block=2' --verify-diagnostics | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather='gather-dtype=int8 quantize-block=0' 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: quantize-block must be positive, not 0

// gather-dtype=int4: two levels a byte, so a shard of 3 levels (padded to
// blocks of 2: 4) travels as 2 bytes a rank; its remark states int4's
// bound; an odd block is an error. (The remarks come first: stderr.)
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather='gather-dtype=int4 quantize-block=2' 2>&1 | FileCheck %s --check-prefix=INT4
// RUN: not zero-opt %s --split-input-file --zero-shard-weight-update --zero-defer-all-gather='gather-dtype=int4 quantize-block=3' 2>&1 | FileCheck %s --check-prefix=ODD
// INT4: remark: gathering a 'tensor<10xf32>' weight in int4 blocks of 2 (gather-dtype=int4): the forward pass reads a copy within max|block|/14 of the weight, which changes results; the carried shard stays exact
// INT4: remark: zero-defer-all-gather: gather-dtype=int4 compresses nothing in this function
// INT4-LABEL: func.func @bf16_forward
// INT4: %[[Q:.*]], %[[S:.*]] = zero.quantize %{{.*}} block = 2 bits = 4 : tensor<1x3xf32> -> tensor<1x2xi8>, tensor<1x2xf32>
// INT4: %[[GQ:.*]] = zero.all_gather %[[Q]] on @dp : tensor<1x2xi8> -> tensor<4x2xi8>
// INT4: %[[GS:.*]] = zero.all_gather %[[S]] on @dp : tensor<1x2xf32> -> tensor<4x2xf32>
// INT4: zero.dequantize %[[GQ]], %[[GS]] block = 2 bits = 4 : tensor<4x2xi8>, tensor<4x2xf32> -> tensor<4x3xbf16>
// ODD: error: quantize-block must be even with gather-dtype=int4 (two levels a byte), not 3

zero.mesh @dp(shape = [4])

// A bf16 copy: 10 elements on 4 ranks are shards of 3, blocks of 2 (the
// last one short); 4 ranks' levels and scales are gathered and dequantized
// into bf16.
// CHECK-LABEL: func.func @bf16_forward
// CHECK-SAME: (%[[W0:[^:]+]]: tensor<10xf32>, %[[X:[^:]+]]: tensor<10xbf16>)
// CHECK: %[[COPY0:.*]] = arith.truncf %[[W0]] : tensor<10xf32> to tensor<10xbf16>
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[WS:.*]] = %{{.*}}, %[[WB:.*]] = %[[COPY0]]) -> (tensor<3xf32>, tensor<10xbf16>)
// CHECK: arith.mulf %[[WB]], %[[X]] : tensor<10xbf16>
// CHECK: %[[NEW:.*]] = arith.subf %[[WS]], %{{.*}} : tensor<3xf32>
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[NEW]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf32> into tensor<1x3xf32>
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %[[ROW]] block = 2 : tensor<1x3xf32> -> tensor<1x3xi8>, tensor<1x2xf32>
// CHECK: %[[GQ:.*]] = zero.all_gather %[[Q]] on @dp : tensor<1x3xi8> -> tensor<4x3xi8>
// CHECK: %[[GS:.*]] = zero.all_gather %[[S]] on @dp : tensor<1x2xf32> -> tensor<4x2xf32>
// CHECK: %[[D:.*]] = zero.dequantize %[[GQ]], %[[GS]] block = 2 : tensor<4x3xi8>, tensor<4x2xf32> -> tensor<4x3xbf16>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0, 1]] : tensor<4x3xbf16> into tensor<12xbf16>
// CHECK: %[[NB:.*]] = tensor.extract_slice %[[FLAT]][0] [10] [1] : tensor<12xbf16> to tensor<10xbf16>
// CHECK: scf.yield %[[NEW]], %[[NB]] : tensor<3xf32>, tensor<10xbf16>
// CHECK: %[[LAST:.*]] = zero.all_gather %[[R]]#0 on @dp : tensor<3xf32> -> tensor<12xf32>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[LAST]][0] [10] [1]
// CHECK: return %[[OUT]]
func.func @bf16_forward(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  // expected-remark @+1 {{gathering a 'tensor<10xf32>' weight in int8 blocks of 2 (gather-dtype=int8): the forward pass reads a copy within max|block|/254 of the weight, which changes results; the carried shard stays exact}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
    %yb = arith.mulf %wb, %x : tensor<10xbf16>
    %gl = arith.extf %yb : tensor<10xbf16> to tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}

// -----

zero.mesh @dp(shape = [2])

// The forward pass reads the fp32 weight: the copy is dequantized into f32,
// and the caller still gets the exact shard gathered after the loop, not
// the last copy.
// CHECK-LABEL: func.func @f32_forward
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} -> (tensor<4xf32>, tensor<8xf32>)
// CHECK: zero.quantize %{{.*}} block = 2 : tensor<1x4xf32> -> tensor<1x4xi8>, tensor<1x2xf32>
// CHECK: zero.dequantize %{{.*}}, %{{.*}} block = 2 : tensor<2x4xi8>, tensor<2x2xf32> -> tensor<2x4xf32>
// CHECK: %[[LAST:.*]] = zero.all_gather %[[R]]#0 on @dp : tensor<4xf32> -> tensor<8xf32>
// CHECK: return %[[LAST]]
func.func @f32_forward(%w0: tensor<8xf32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  // expected-remark @+1 {{gathering a 'tensor<8xf32>' weight in int8 blocks of 2}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%w = %w0) -> (tensor<8xf32>) {
    %y = arith.mulf %w, %x : tensor<8xf32>
    %g = zero.all_reduce %y on @dp reduce = sum : tensor<8xf32>
    %w2 = arith.subf %w, %g : tensor<8xf32>
    scf.yield %w2 : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [2])

// No loop-carried weight gathered from an update: nothing is compressed,
// and a remark says so.
// CHECK-LABEL: func.func @no_loop
// CHECK-NOT: zero.quantize
// expected-remark @+1 {{zero-defer-all-gather: gather-dtype=int8 compresses nothing in this function: no training loop (scf.for) in it all-gathers an updated weight shard for its next iteration}}
func.func @no_loop(%w: tensor<8xf32>, %gl: tensor<8xf32>) -> tensor<8xf32> {
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
  %w2 = arith.subf %w, %g : tensor<8xf32>
  return %w2 : tensor<8xf32>
}
