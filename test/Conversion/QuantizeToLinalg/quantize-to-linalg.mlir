// zero-quantize-to-linalg: each block's largest magnitude, the scales, the
// levels and the values as linalg.generic over a (blocks, block) view of the
// last dimension; a short last block is padded with zeros and cut off again.
// RUN: zero-opt %s --split-input-file --zero-quantize-to-linalg | FileCheck %s

// Whole blocks: a view, no padding.
// CHECK-LABEL: func.func @whole_blocks
// CHECK-NOT: tensor.pad
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [2, 2, 4] : tensor<2x8xf32> into tensor<2x2x4xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x2x4xf32>) outs(%[[ZEROS]] : tensor<2x2xf32>)
// CHECK:   math.absf
// CHECK:   arith.maximumf
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[MAX]] : tensor<2x2xf32>)
// CHECK:   arith.constant 1.270000e+02
// CHECK:   arith.divf
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[X]] : tensor<2x2xf32>, tensor<2x2x4xf32>) outs(%{{.*}} : tensor<2x2x4xi8>)
// CHECK:   arith.divf
// CHECK:   math.roundeven
// CHECK:   arith.minimumf
// CHECK:   arith.maximumf
// CHECK:   arith.cmpf uno
// CHECK:   arith.select
// CHECK:   arith.fptosi {{.*}} : f32 to i8
// CHECK: %[[QF:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0], [1, 2]] : tensor<2x2x4xi8> into tensor<2x8xi8>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[QF]], %[[S]]
func.func @whole_blocks(%x: tensor<2x8xf32>) -> (tensor<2x8xi8>, tensor<2x2xf32>) {
  %q, %s = zero.quantize %x block = 4 : tensor<2x8xf32> -> tensor<2x8xi8>, tensor<2x2xf32>
  return %q, %s : tensor<2x8xi8>, tensor<2x2xf32>
}

// -----

// A short last block: padded with zeros, which change no largest magnitude.
// CHECK-LABEL: func.func @short_last_block
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0] high[2]
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [3, 4] : tensor<12xbf16> into tensor<3x4xbf16>
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: %[[Q:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<3x4xi8> into tensor<12xi8>
// CHECK: tensor.extract_slice %[[Q]][0] [10] [1] : tensor<12xi8> to tensor<10xi8>
func.func @short_last_block(%x: tensor<10xbf16>) -> (tensor<10xi8>, tensor<3xf32>) {
  %q, %s = zero.quantize %x block = 4 : tensor<10xbf16> -> tensor<10xi8>, tensor<3xf32>
  return %q, %s : tensor<10xi8>, tensor<3xf32>
}

// -----

// Dequantization: one multiply an element, in f32, then the result's type.
// CHECK-LABEL: func.func @dequantize
// CHECK: %[[V:.*]] = tensor.pad %arg0 low[0, 0] high[0, 2]
// CHECK: %[[VB:.*]] = tensor.expand_shape %[[V]] {{\[\[}}0], [1, 2]] output_shape [4, 3, 4] : tensor<4x12xi8> into tensor<4x3x4xi8>
// CHECK: %[[D:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1, %[[VB]] : tensor<4x3xf32>, tensor<4x3x4xi8>) outs(%{{.*}} : tensor<4x3x4xbf16>)
// CHECK:   arith.sitofp {{.*}} : i8 to f32
// CHECK:   arith.mulf
// CHECK:   arith.truncf {{.*}} : f32 to bf16
// CHECK: tensor.collapse_shape %[[D]]
// CHECK: tensor.extract_slice
func.func @dequantize(%q: tensor<4x10xi8>, %s: tensor<4x3xf32>) -> tensor<4x10xbf16> {
  %d = zero.dequantize %q, %s block = 4 : tensor<4x10xi8>, tensor<4x3xf32> -> tensor<4x10xbf16>
  return %d : tensor<4x10xbf16>
}

// -----

// 4 bits: levels clamped to [-7, 7], the scale max|block| / 7; pairs of
// levels packed a byte (element 2k in the low half, 2k + 1 in the high),
// block by block, and the bytes' padding cut off (10 levels, 5 bytes).
// CHECK-DAG: #[[EVEN:.*]] = affine_map<(d0, d1) -> (d0, d1 * 2)>
// CHECK-DAG: #[[ODD:.*]] = affine_map<(d0, d1) -> (d0, d1 * 2 + 1)>
// CHECK-DAG: #[[BYTE:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 2)>
// CHECK-LABEL: func.func @int4
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[SCALES:.*]] = linalg.generic
// CHECK:   arith.constant 7.000000e+00 : f32
// CHECK:   arith.divf
// CHECK: %[[L:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x4xi8>)
// CHECK:   arith.constant 7.000000e+00 : f32
// CHECK:   arith.constant -7.000000e+00 : f32
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[EVEN]], #[[ODD]], #{{.*}}], {{.*}} ins(%[[L]], %[[L]] : tensor<3x4xi8>, tensor<3x4xi8>) outs(%{{.*}} : tensor<3x2xi8>)
// CHECK:   arith.andi
// CHECK:   arith.shli
// CHECK:   arith.ori
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<3x2xi8> into tensor<6xi8>
// CHECK: tensor.extract_slice %[[F]][0] [5] [1] : tensor<6xi8> to tensor<5xi8>
// Unpacked: element i's byte is i floordiv 2, its half by i mod 2, sign
// extended by an arithmetic shift.
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BYTE]], #{{.*}}], {{.*}} ins(%[[SCALES]], %{{.*}} : tensor<3xf32>, tensor<3x2xi8>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK:   linalg.index 1
// CHECK:   arith.remui
// CHECK:   arith.shli
// CHECK:   arith.shrsi
// CHECK:   arith.sitofp {{.*}} : i8 to f32
func.func @int4(%x: tensor<10xf32>) -> (tensor<5xi8>, tensor<10xf32>) {
  %q, %s = zero.quantize %x block = 4 bits = 4 : tensor<10xf32> -> tensor<5xi8>, tensor<3xf32>
  %d = zero.dequantize %q, %s block = 4 bits = 4 : tensor<5xi8>, tensor<3xf32> -> tensor<10xf32>
  return %q, %d : tensor<5xi8>, tensor<10xf32>
}

// -----

// Nothing to expand: the program is unchanged.
// CHECK-LABEL: func.func @nothing
// CHECK-NEXT: return %arg0
func.func @nothing(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
