// zero-report on a loop whose weight gather is deferred, in f32 and in int8
// (qwZ): the bytes a rank sends against the formula. A rank's shard of
// S = 250 f32 elements on 4 ranks sends 3 * 250 * 4 = 3000 bytes a gather;
// in int8 with blocks of B = 50 it sends the levels and one f32 scale a
// block, 3 * (250 + 5 * 4) = 810 bytes, (1 + 4 / B) / 4 = 0.27 of it. Four
// iterations gather the copy; in int8 the caller's weight is gathered once
// more, exactly, after the loop (3000 bytes).
// RUN: zero-opt %s --zero-weight-update-sharding=defer-all-gather --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=F32
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather gather-dtype=int8 quantize-block=50' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=INT8

// F32: all_gather 4 12000{{$}}
// INT8: all_gather 9 6240{{$}}
// INT8: compressed all_gather: int8, blocks of 50, 250 elements x 4; each element within max|block| / 254 a contribution

// In int4 (gather-dtype=int4) two levels go in a byte: 3 * (125 + 5 * 4) =
// 435 bytes a gather, (1/2 + 4 / B) / 4 = 0.145 of f32's.
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather gather-dtype=int4 quantize-block=50' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=INT4
// INT4: all_gather 9 4740{{$}}
// INT4: compressed all_gather: int4, blocks of 50, 250 elements x 4; each element within max|block| / 14 a contribution

// With the gradients' reduce-scatter compressed too (qgZ): the exact one
// sends 3/4 of 4000 bytes a step; the int8 all-to-alls send 3/4 of 1000
// levels and of 4 rows x 5 scales, 810 bytes, the same 0.27 of it. The
// report lists each compressed exchange with its format and bound.
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather quantize-block=50' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=RS
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather quantize-block=50 reduce-dtype=int8' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=QGZ
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather quantize-block=50 reduce-dtype=int8' --zero-report='format=json' -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather quantize-block=50 reduce-dtype=int4' --zero-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=QGZ4
// RS-LABEL: zero-report: @step
// RS: reduce_scatter 4 12000{{$}}
// RS-NOT: compressed
// QGZ-LABEL: zero-report: @step
// QGZ-NOT: reduce_scatter
// QGZ: all_to_all 8 3240{{$}}
// QGZ: compressed all_to_all: int8, blocks of 50, 1000 elements x 4; each element within max|block| / 254 a contribution
// int4: the levels' bytes halve, the scales' stay: a rank sends 3/4 x
// (500 + 4 x 20) x 4 = 1740 bytes (int8: 3240).
// QGZ4-LABEL: zero-report: @step
// QGZ4: all_to_all 8 1740{{$}}
// QGZ4: compressed all_to_all: int4, blocks of 50, 1000 elements x 4; each element within max|block| / 14 a contribution
// JSON: "compressed": [
// JSON: "block": 50,
// JSON: "bound": "max|block| / 254 a contribution",
// JSON: "collective": "all_to_all",
// JSON: "elements": 1000,
// JSON: "executions": 4,
// JSON: "format": "int8"

zero.mesh @dp(shape = [4])
func.func @step(%w0: tensor<1000xf32>, %x: tensor<1000xf32>)
    -> (tensor<1000xf32>, tensor<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.125> : tensor<1000xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0, %seen = %x)
      -> (tensor<1000xf32>, tensor<1000xf32>) {
    %y = arith.mulf %w, %x : tensor<1000xf32>
    %gl = arith.mulf %y, %x : tensor<1000xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<1000xf32>
    %d = arith.mulf %g, %lr : tensor<1000xf32>
    %w2 = arith.subf %w, %d : tensor<1000xf32>
    scf.yield %w2, %y : tensor<1000xf32>, tensor<1000xf32>
  }
  return %r#0, %r#1 : tensor<1000xf32>, tensor<1000xf32>
}
