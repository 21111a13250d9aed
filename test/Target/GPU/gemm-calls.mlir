// zero-gemm-calls: a matmul on row-major buffers becomes a call of the
// runtime's cuBLAS GEMM (dtype codes, m, n, k, and each operand's pointer and
// leading dimension); one it cannot call cuBLAS for stays a loop nest, with a
// remark.

// RUN: zero-opt %s --split-input-file --zero-gemm-calls --cse --verify-diagnostics | FileCheck %s
// With `host` (zero-to-llvm{gpu-loops}) the same calls are of the runtime's
// host GEMM, and the same matmuls stay loop nests.
// RUN: zero-opt %s --split-input-file --zero-gemm-calls=gemm=host --cse --verify-diagnostics | FileCheck %s --check-prefix=HOST
// HOST-LABEL: func.func @f32
// HOST: call @zero_rt_host_matmul({{.*}}) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()
// HOST-NOT: zero_rt_gpu_matmul
// HOST-LABEL: func.func @dynamic_layout
// HOST: scf.if
// HOST-NEXT: func.call @zero_rt_host_matmul
// HOST-LABEL: func.func @left_alone
// HOST-COUNT-3: linalg.matmul
// HOST-NOT: zero_rt_

// f32: C[8x16] += A[8x4] B[4x16].
// CHECK-LABEL: func.func @f32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[M:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-DAG: %[[LDA:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[LDB:.*]] = arith.constant 16 : i64
// CHECK: call @zero_rt_gpu_matmul(%[[F32]], %[[F32]], %[[M]], %{{.*}}, %{{.*}}, %{{.*}}, %[[LDA]], %{{.*}}, %[[LDB]], %{{.*}}, %[[LDB]]) : (i32, i32, i64, i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64) -> ()
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

// Left as loop nests, each with a remark: integers (no cuBLAS GEMM), a
// transposed operand (rows not contiguous), and tensors (not bufferized).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT: zero_rt_gpu_matmul
func.func @left_alone(%ai: memref<4x4xi32>, %c: memref<4x4xi32>,
                      %at: memref<4x4xf32, strided<[1, 4]>>, %b: memref<4x4xf32>,
                      %cf: memref<4x4xf32>, %t: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @+1 {{matmul left as a loop nest: cuBLAS has no GEMM for these element types}}
  linalg.matmul ins(%ai, %ai : memref<4x4xi32>, memref<4x4xi32>) outs(%c : memref<4x4xi32>)
  // expected-remark @+1 {{matmul left as a loop nest: an operand's rows are not contiguous}}
  linalg.matmul ins(%at, %b : memref<4x4xf32, strided<[1, 4]>>, memref<4x4xf32>) outs(%cf : memref<4x4xf32>)
  // expected-remark @+1 {{matmul left as a loop nest: it is not on buffers}}
  %r = linalg.matmul ins(%t, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
