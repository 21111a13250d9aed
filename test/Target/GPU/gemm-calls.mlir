// zero-gemm-calls: a matmul on row-major buffers becomes a call of the
// runtime's cuBLAS GEMM (dtype codes, m, n, k, and each operand's pointer and
// leading dimension, and for each input whether it is stored transposed);
// one it cannot call cuBLAS for stays a loop nest, with a remark.

// RUN: zero-opt %s --split-input-file --zero-gemm-calls --cse --verify-diagnostics | FileCheck %s
// With `host` (zero-to-llvm{gpu-loops}) the same calls are of the runtime's
// host GEMM, and the same matmuls stay loop nests.
// RUN: zero-opt %s --split-input-file --zero-gemm-calls=gemm=host --cse --verify-diagnostics | FileCheck %s --check-prefix=HOST
// The host's GEMM takes one more argument, whether to add to C's old value:
// 1, but where a fill of +0.0 makes C just before (@zero_filled).
// HOST-LABEL: func.func @f32
// HOST: %[[ONE:.*]] = arith.constant 1 : i32
// HOST: call @zero_rt_host_matmul({{.*}}, %[[ONE]]) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, i32, !llvm.ptr, i64, i32, !llvm.ptr, i64, i32) -> ()
// HOST-NOT: zero_rt_gpu_matmul
// HOST-LABEL: func.func @dynamic_layout
// HOST: scf.if
// HOST-NEXT: func.call @zero_rt_host_matmul
// HOST-LABEL: func.func @left_alone
// HOST-COUNT-5: linalg.matmul
// HOST-NOT: call @zero_rt_

// f32: C[8x16] += A[8x4] B[4x16].
// CHECK-LABEL: func.func @f32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[M:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-DAG: %[[LDA:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[LDB:.*]] = arith.constant 16 : i64
// CHECK: call @zero_rt_gpu_matmul(%[[F32]], %[[F32]], %[[M]], %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]], %[[F32]], %{{.*}}, %[[LDB]], %[[F32]], %{{.*}}, %[[LDB]]) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, i32, !llvm.ptr, i64, i32, !llvm.ptr, i64) -> ()
// CHECK-NOT: linalg.matmul
func.func @f32(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                outs(%c : memref<8x16xf32>)
  return
}

// -----

// bf16 inputs into an f32 output (codes 1 and 0); A is a view of a wider
// buffer, so its leading dimension is the row stride, 10, and its pointer
// is offset by the view's first element.
// CHECK-LABEL: func.func @bf16_view
// CHECK-DAG: %[[BF16:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<8x6xbf16, strided<[10, 1], offset: 2>>
// CHECK: arith.addi %[[BASE]]
// CHECK: %[[LDA:.*]] = arith.constant 10 : i64
// CHECK: call @zero_rt_gpu_matmul(%[[BF16]], %[[F32]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]],
func.func @bf16_view(%wide: memref<8x10xbf16>, %b: memref<6x3xbf16>, %c: memref<8x3xf32>) {
  %a = memref.subview %wide[0, 2] [8, 6] [1, 1] : memref<8x10xbf16> to memref<8x6xbf16, strided<[10, 1], offset: 2>>
  linalg.matmul ins(%a, %b : memref<8x6xbf16, strided<[10, 1], offset: 2>>, memref<6x3xbf16>)
                outs(%c : memref<8x3xf32>)
  return
}

// -----

// A dynamic leading dimension is read from the buffer at run time.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[LD:.*]] = arith.index_cast %[[STRIDES]]#0 : index to i64
// CHECK: call @zero_rt_gpu_matmul({{.*}}, %[[LD]],
func.func @dynamic(%a: memref<?x?xf32, strided<[?, 1], offset: ?>>, %b: memref<?x16xf32>, %c: memref<?x16xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x16xf32>)
                outs(%c : memref<?x16xf32>)
  return
}

// -----

// An operand with a dynamic layout (a weight a training loop carries): its
// rows are checked at run time, the call where they are contiguous, the loop
// nest where not.
// CHECK-LABEL: func.func @dynamic_layout
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[UNIT:.*]] = arith.cmpi eq, %[[STRIDES]]#1, %c1{{.*}} : index
// CHECK: scf.if %[[UNIT]] {
// CHECK-NEXT: func.call @zero_rt_gpu_matmul
// CHECK-NEXT: } else {
// CHECK-NEXT: linalg.matmul
func.func @dynamic_layout(%a: memref<8x4xf32>,
                          %w: memref<4x16xf32, strided<[?, ?], offset: ?>>,
                          %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %w : memref<8x4xf32>, memref<4x16xf32, strided<[?, ?], offset: ?>>)
                outs(%c : memref<8x16xf32>)
  return
}

// -----

// Operands read transposed, as zero-normalize-matmuls leaves a
// linear layer's forward (B through a transposed map: W stored n x k) and
// its weight's gradient (A: dy stored k x m), are passed as stored with
// their flags; k is A's dimension the map reads as k.
// CHECK-LABEL: func.func @transposed_maps
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C8]], %[[NO]], %{{.*}}, %[[C8]], %[[YES]], %{{.*}}, %[[C16]])
// CHECK: %[[DYK:.*]] = memref.dim %arg3, %c0 : memref<4x16xf32>
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[DYK]] : index to i64
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[K]], %{{.*}}, %[[C16]], %[[YES]], %{{.*}}, %[[C8]], %[[NO]], %{{.*}}, %[[C8]])
// CHECK-NOT: linalg.matmul
func.func @transposed_maps(%x: memref<4x8xbf16>, %w: memref<16x8xbf16>, %y: memref<4x16xf32>,
                           %dy: memref<4x16xf32>, %xf: memref<4x8xf32>, %g: memref<16x8xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                 affine_map<(d0, d1, d2) -> (d1, d2)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : memref<4x8xbf16>, memref<16x8xbf16>) outs(%y : memref<4x16xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%dy, %xf : memref<4x16xf32>, memref<4x8xf32>) outs(%g : memref<16x8xf32>)
  return
}

// -----

// The generic form of a matmul (linalg-generalize-named-ops writes it so, and
// front ends emit it) is a GEMM call as the named op is: here x W^T in bf16
// into f32 (its inputs widened in its body), and a matmul whose loops run
// (k, m, n). A generic whose body does something else stays as it is.
// CHECK-LABEL: func.func @generic_forms
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{.*}},
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{.*}},
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK-NOT: call @zero_rt_gpu_matmul
// CHECK: return
func.func @generic_forms(%x: memref<4x8xbf16>, %w: memref<16x8xbf16>, %y: memref<4x16xf32>,
                         %a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x8xbf16>, memref<16x8xbf16>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(k, m, n) -> (m, k)>,
                                   affine_map<(k, m, n) -> (k, n)>,
                                   affine_map<(k, m, n) -> (m, n)>],
                  iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in_0, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                   affine_map<(d0, d1, d2) -> (d2, d1)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.subf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A column-major operand (a transposed view) is the transpose of what is
// stored, led by its column stride; read through a transposed map as well,
// the two cancel.
// CHECK-LABEL: func.func @column_major
// CHECK-DAG: %[[NO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[C6:.*]] = arith.constant 6 : i64
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C6]], %[[YES]], %{{.*}}, %{{.*}}, %[[NO]],
// CHECK: call @zero_rt_gpu_matmul(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C6]], %[[NO]], %{{.*}}, %{{.*}}, %[[NO]],
func.func @column_major(%at: memref<4x6xf32, strided<[1, 6]>>, %b: memref<6x4xf32>,
                        %c: memref<4x4xf32>, %a: memref<6x4xf32, strided<[1, 6]>>) {
  linalg.matmul ins(%at, %b : memref<4x6xf32, strided<[1, 6]>>, memref<6x4xf32>) outs(%c : memref<4x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<6x4xf32, strided<[1, 6]>>, memref<6x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// Left as loop nests, each with a remark: integers (no cuBLAS GEMM), an
// operand with neither unit stride, a broadcast operand, a transposed
// result, and tensors (not bufferized).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: linalg.matmul
// CHECK-NOT: call @zero_rt_gpu_matmul
func.func @left_alone(%ai: memref<4x4xi32>, %c: memref<4x4xi32>,
                      %as: memref<4x4xf32, strided<[8, 2]>>, %b: memref<4x4xf32>,
                      %cf: memref<4x4xf32>, %v: memref<4xf32>,
                      %ct: memref<4x4xf32, strided<[1, 4]>>,
                      %t: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @+1 {{matmul left as a loop nest: there is no GEMM for these element types}}
  linalg.matmul ins(%ai, %ai : memref<4x4xi32>, memref<4x4xi32>) outs(%c : memref<4x4xi32>)
  // expected-remark @+1 {{matmul left as a loop nest: an operand is neither row- nor column-major}}
  linalg.matmul ins(%as, %b : memref<4x4xf32, strided<[8, 2]>>, memref<4x4xf32>) outs(%cf : memref<4x4xf32>)
  // expected-remark @+1 {{matmul left as a loop nest: an operand is not a 2-D buffer}}
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%v, %b : memref<4xf32>, memref<4x4xf32>) outs(%cf : memref<4x4xf32>)
  // expected-remark @+1 {{matmul left as a loop nest: its result's rows are not contiguous}}
  linalg.matmul ins(%b, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%ct : memref<4x4xf32, strided<[1, 4]>>)
  // expected-remark @+1 {{matmul left as a loop nest: it is not on buffers}}
  %r = linalg.matmul ins(%t, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// C made by a fill of +0.0 just before the matmul: the host's GEMM does not
// read C (its sums plus zero, the bits the zeros give), and the fill goes;
// cuBLAS is called as before, after the fill. A fill of -0.0, or one with a
// read of C between, stays, and the GEMM adds to C. Where the call is
// guarded by a run-time check of the layout, the fill goes into the
// branch that keeps the loop nest.
// CHECK-LABEL: func.func @zero_filled
// CHECK: linalg.fill
// CHECK: call @zero_rt_gpu_matmul
// HOST-LABEL: func.func @zero_filled
// HOST-NOT: linalg.fill
// HOST: %[[NONE:.*]] = arith.constant 0 : i32
// HOST: call @zero_rt_host_matmul({{.*}}, %[[NONE]]) :
// HOST: linalg.fill ins(%{{.*}} : f32) outs(%[[C2:.*]] : memref<8x16xf32>)
// HOST: %[[ONE:.*]] = arith.constant 1 : i32
// HOST: call @zero_rt_host_matmul({{.*}}, %[[ONE]]) :
// HOST: linalg.fill
// HOST: memref.copy
// HOST: call @zero_rt_host_matmul({{.*}}, %[[ONE]]) :
// HOST: scf.if
// HOST-NEXT: func.call @zero_rt_host_matmul({{.*}}, %[[NONE]]) :
// HOST-NEXT: } else {
// HOST-NEXT: linalg.fill
// HOST-NEXT: linalg.matmul
func.func @zero_filled(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %c: memref<8x16xf32>,
                       %c2: memref<8x16xf32>, %c3: memref<8x16xf32>, %copy: memref<8x16xf32>,
                       %d: memref<?x4xf32, strided<[?, ?], offset: ?>>, %e: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %minus = arith.constant -0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                outs(%c : memref<8x16xf32>)
  linalg.fill ins(%minus : f32) outs(%c2 : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                outs(%c2 : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%c3 : memref<8x16xf32>)
  memref.copy %c3, %copy : memref<8x16xf32> to memref<8x16xf32>
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                outs(%c3 : memref<8x16xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<?x16xf32>)
  linalg.matmul ins(%d, %b : memref<?x4xf32, strided<[?, ?], offset: ?>>, memref<4x16xf32>)
                outs(%e : memref<?x16xf32>)
  return
}
