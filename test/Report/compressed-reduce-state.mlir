// zero-report on a compressed reduce-scatter (qgZ): the local gradient it
// sends is not state, and error feedback's residual is, counted apart. A
// step on 4 ranks: a weight of 1024 f32 elements (4096 bytes) and a
// gradient of 4096 sent in int8 rows; with error feedback each rank keeps a
// residual of the 4096 elements it sends (16384 bytes), taken and returned
// by the step or carried by a training loop.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAIN
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 error-feedback' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=FEEDBACK
// In bf16 a rank sends half the f32 bytes, 3/4 of 4096 x 2, and no scales.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='bits=16' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// BF16-LABEL: zero-report: @step
// BF16: all_to_all 1 6144{{$}}
// BF16: compressed all_to_all: bf16, 4096 elements x 1; each element within |x| / 256 a contribution
// BF16: model state bytes per rank: 4096{{$}}
// BF16-NEXT: weights and optimizer state: 4096, reduced gradients: 0
// BF16-LABEL: zero-report: @loop
// BF16: model state bytes per rank: 4096{{$}}
// With error feedback in bf16, the residual is state and the gradient not.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='bits=16 error-feedback' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16-FEEDBACK
// BF16-FEEDBACK-LABEL: zero-report: @step
// BF16-FEEDBACK: model state bytes per rank: 20480{{$}}
// BF16-FEEDBACK-NEXT: weights and optimizer state: 4096, error-feedback residuals: 16384, reduced gradients: 0

// PLAIN-LABEL: zero-report: @step
// PLAIN: compressed all_to_all: int8, blocks of 512, 4096 elements x 1
// PLAIN: model state bytes per rank: 4096{{$}}
// PLAIN-NEXT: weights and optimizer state: 4096, reduced gradients: 0
// PLAIN-LABEL: zero-report: @loop
// PLAIN: model state bytes per rank: 4096{{$}}
// PLAIN-NEXT: weights and optimizer state: 4096, reduced gradients: 0

// FEEDBACK-LABEL: zero-report: @step
// FEEDBACK: model state bytes per rank: 20480
// FEEDBACK-NEXT: weights and optimizer state: 4096, error-feedback residuals: 16384, reduced gradients: 0
// FEEDBACK-LABEL: zero-report: @loop
// FEEDBACK: model state bytes per rank: 20480
// FEEDBACK-NEXT: weights and optimizer state: 4096, error-feedback residuals: 16384, reduced gradients: 0

zero.mesh @dp(shape = [4])
func.func @step(%g: tensor<4096xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
  %n = arith.subf %w, %gs : tensor<1024xf32>
  return %n : tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])
func.func @loop(%g: tensor<4096xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %w) -> tensor<1024xf32> {
    %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
    %n = arith.subf %a, %gs : tensor<1024xf32>
    scf.yield %n : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}
