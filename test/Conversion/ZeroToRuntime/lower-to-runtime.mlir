// RUN: zero-opt %s --zero-lower-to-runtime --split-input-file | FileCheck %s

// Each bufferized collective becomes one runtime call: the buffers as
// pointers at their offsets, the element count, the dtype code (bf16 = 1,
// f32 = 0) and reduction code (sum = 0, max = 2), and a constant group
// descriptor {mesh rank, shape..., number of axes, axes...}. The mesh
// symbols go.

zero.mesh @hybrid(shape = [2, 4])

// CHECK-NOT: zero.mesh
// CHECK-DAG: func.func private @zero_rt_reduce_scatter(!llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @zero_rt_all_gather(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr)
// CHECK-DAG: func.func private @zero_rt_all_reduce(!llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr)
// CHECK-DAG: func.func private @zero_rt_group_index(!llvm.ptr) -> i64
// CHECK-DAG: memref.global "private" constant @__zero_group_hybrid : memref<6xi64> = dense<[2, 2, 4, 2, 0, 1]>
// CHECK-DAG: memref.global "private" constant @__zero_group_hybrid_axes_1 : memref<5xi64> = dense<[2, 2, 4, 1, 1]>

// CHECK-LABEL: func.func @lower
func.func @lower(%in: memref<8x16xbf16>, %out: memref<2x16xbf16>,
                 %s: memref<64xf32, strided<[1], offset: ?>>,
                 %g: memref<256xf32>) -> index {
  // CHECK: %[[COUNT:.*]] = arith.constant 128 : i64
  // CHECK: %[[BF16:.*]] = arith.constant 1 : i32
  // CHECK: %[[SUM:.*]] = arith.constant 0 : i32
  // CHECK: memref.get_global @__zero_group_hybrid_axes_1
  // CHECK: call @zero_rt_reduce_scatter(%{{.*}}, %{{.*}}, %[[COUNT]], %[[BF16]], %[[SUM]], %{{.*}})
  zero.reduce_scatter_buffer %in, %out on @hybrid axes = [1] reduce = sum
      : memref<8x16xbf16>, memref<2x16xbf16>
  // A view at a dynamic offset: the pointer moves by offset * 4 bytes.
  // CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %arg2
  // CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %arg2
  // CHECK: %[[BYTES:.*]] = arith.muli %[[OFF]], %c4
  // CHECK: arith.addi %[[BASE]], %[[BYTES]]
  // CHECK: call @zero_rt_all_gather(%{{.*}}, %{{.*}}, %c64_i64, %{{.*}}, %{{.*}})
  zero.all_gather_buffer %s, %g on @hybrid axes = [1]
      : memref<64xf32, strided<[1], offset: ?>>, memref<256xf32>
  // CHECK: %[[MAX:.*]] = arith.constant 2 : i32
  // CHECK: memref.get_global @__zero_group_hybrid :
  // CHECK: call @zero_rt_all_reduce(%{{.*}}, %{{.*}}, %c256_i64, %{{.*}}, %[[MAX]], %{{.*}})
  zero.all_reduce_buffer %g, %g on @hybrid reduce = max
      : memref<256xf32>, memref<256xf32>
  // CHECK: %[[I:.*]] = call @zero_rt_group_index(%{{.*}}) : (!llvm.ptr) -> i64
  // CHECK: %[[IDX:.*]] = arith.index_cast %[[I]] : i64 to index
  // CHECK: return %[[IDX]]
  %i = zero.replica_index on @hybrid axes = [1] : index
  return %i : index
}

// -----

// A started collective calls the `_start` entry point, which returns the
// handle that zero_rt_wait takes where the zero.wait stood.

zero.mesh @dp(shape = [4])

// CHECK-DAG: func.func private @zero_rt_all_gather_start(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-DAG: func.func private @zero_rt_wait(!llvm.ptr)
// CHECK-LABEL: func.func @started
func.func @started(%in: memref<4xf32>, %out: memref<16xf32>, %x: memref<8xf32>) {
  // CHECK: %[[H:.*]] = call @zero_rt_all_gather_start(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
  // CHECK: memref.load
  // CHECK-NEXT: call @zero_rt_wait(%[[H]]) : (!llvm.ptr) -> ()
  %r = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<16xf32> -> !zero.request
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  zero.wait %r, %in, %out : memref<4xf32>, memref<16xf32>
  return
}

// -----

// Collectives started one after another, with only their arguments, their
// output buffers and their labels between them, are one batch: what one
// step of the schedule issues together (the nccl backend issues a batch as
// one NCCL group). Work between two starts ends a batch; one start alone is
// none.

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @batched
// CHECK: call @zero_rt_batch_begin() : () -> ()
// CHECK-NEXT: %[[A:.*]] = call @zero_rt_reduce_scatter_start
// CHECK-NOT: zero_rt_batch
// CHECK: memref.alloc
// CHECK: call @zero_rt_label
// CHECK-NEXT: %[[B:.*]] = call @zero_rt_reduce_scatter_start
// CHECK-NEXT: call @zero_rt_batch_end() : () -> ()
// CHECK-NOT: zero_rt_batch
// CHECK: call @zero_rt_wait(%[[A]])
// CHECK: call @zero_rt_wait(%[[B]])
func.func @batched(%g1: memref<16xf32>, %g2: memref<32xf32>) -> (memref<4xf32>, memref<8xf32>) {
  %s1 = memref.alloc() : memref<4xf32>
  %r1 = zero.reduce_scatter_buffer %g1, %s1 on @dp reduce = sum : memref<16xf32>, memref<4xf32> -> !zero.request
  %s2 = memref.alloc() : memref<8xf32>
  %r2 = zero.reduce_scatter_buffer %g2, %s2 on @dp reduce = sum {zero.bucket = {id = 1 : i64}} : memref<32xf32>, memref<8xf32> -> !zero.request
  zero.wait %r1, %g1, %s1 : memref<16xf32>, memref<4xf32>
  zero.wait %r2, %g2, %s2 : memref<32xf32>, memref<8xf32>
  return %s1, %s2 : memref<4xf32>, memref<8xf32>
}

// CHECK-LABEL: func.func @unbatched
// CHECK-NOT: zero_rt_batch
// CHECK: return
func.func @unbatched(%g1: memref<16xf32>, %g2: memref<32xf32>, %x: memref<8xf32>) -> (memref<4xf32>, memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %s1 = memref.alloc() : memref<4xf32>
  %r1 = zero.reduce_scatter_buffer %g1, %s1 on @dp reduce = sum : memref<16xf32>, memref<4xf32> -> !zero.request
  memref.store %f, %x[%c0] : memref<8xf32>
  %s2 = memref.alloc() : memref<8xf32>
  %r2 = zero.reduce_scatter_buffer %g2, %s2 on @dp reduce = sum : memref<32xf32>, memref<8xf32> -> !zero.request
  zero.wait %r1, %g1, %s1 : memref<16xf32>, memref<4xf32>
  zero.wait %r2, %g2, %s2 : memref<32xf32>, memref<8xf32>
  return %s1, %s2 : memref<4xf32>, memref<8xf32>
}

// -----

// A request that a loop carries (zero-expand-loop-futures) is the handle
// itself: the loop carries an !llvm.ptr, the first one null, and each
// zero.wait, in the body and after the loop, calls zero_rt_wait on it.

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @carried
// CHECK: %[[NONE:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: %[[LAST:.*]] = scf.for {{.*}} iter_args(%[[Q:.*]] = %[[NONE]]) -> (!llvm.ptr) {
// CHECK-NEXT: call @zero_rt_wait(%[[Q]]) : (!llvm.ptr) -> ()
// CHECK: %[[H:.*]] = func.call @zero_rt_all_gather_start
// CHECK-NEXT: scf.yield %[[H]] : !llvm.ptr
// CHECK: call @zero_rt_wait(%[[LAST]]) : (!llvm.ptr) -> ()
func.func @carried(%in: memref<4xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %none = zero.completed_request
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %none) -> (!zero.request) {
    zero.wait %q, %in, %out : memref<4xf32>, memref<16xf32>
    %q2 = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<16xf32> -> !zero.request
    scf.yield %q2 : !zero.request
  }
  zero.wait %r, %in, %out : memref<4xf32>, memref<16xf32>
  return
}

// -----

zero.mesh @dp(shape = [2])

// A buffer with a dimension of size 0 has no elements: dense, whatever
// strides its layout would give (it was rejected as not contiguous).
// CHECK-LABEL: func.func @no_elements
// CHECK: call @zero_rt_reduce_scatter
// CHECK-NOT: zero.reduce_scatter_buffer
func.func @no_elements(%g: memref<4x0xf32>, %s: memref<2x0xf32>) {
  zero.reduce_scatter_buffer %g, %s on @dp reduce = sum : memref<4x0xf32>, memref<2x0xf32>
  return
}

// -----

// An all-to-all is one call with the element count of its input (int8 =
// dtype 6, no reduction code); started, its `_start` entry point.

zero.mesh @dp(shape = [4])

// CHECK-DAG: func.func private @zero_rt_all_to_all(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr)
// CHECK-DAG: func.func private @zero_rt_all_to_all_start(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> !llvm.ptr
// CHECK-LABEL: func.func @exchange
func.func @exchange(%q: memref<4x8xi8>, %parts: memref<4x8xi8>,
                    %s: memref<4x2xf32>, %scales: memref<4x2xf32>) {
  // CHECK: call @zero_rt_all_to_all(%{{.*}}, %{{.*}}, %c32_i64, %c6_i32, %{{.*}})
  zero.all_to_all_buffer %q, %parts on @dp : memref<4x8xi8>, memref<4x8xi8>
  // CHECK: %[[H:.*]] = call @zero_rt_all_to_all_start(%{{.*}}, %{{.*}}, %c8_i64, %c0_i32, %{{.*}})
  // CHECK: call @zero_rt_wait(%[[H]])
  %r = zero.all_to_all_buffer %s, %scales on @dp : memref<4x2xf32>, memref<4x2xf32> -> !zero.request
  zero.wait %r, %s, %scales : memref<4x2xf32>, memref<4x2xf32>
  return
}

// -----

// A buffer in host memory beside a GPU: the runtime's zero_rt_host_alloc of
// its bytes, made a descriptor (pointer twice, offset 0, sizes, row-major
// strides) that the memref lowering takes through an unrealized cast.
// CHECK-LABEL: func.func @host_buffer
// CHECK: %[[BYTES:.*]] = arith.constant 96 : i64
// CHECK: %[[P:.*]] = call @zero_rt_host_alloc(%[[BYTES]]) : (i64) -> !llvm.ptr
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[P]], %{{.*}}[1]
// CHECK: %[[S0:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: llvm.insertvalue %[[S0]], %{{.*}}[3, 0]
// CHECK: %[[T0:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK: llvm.insertvalue %[[T0]], %{{.*}}[4, 0]
// CHECK: %[[D:.*]] = llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]
// CHECK: builtin.unrealized_conversion_cast %[[D]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x6xf32>
func.func @host_buffer() -> memref<4x6xf32> {
  %0 = zero.host_alloc : memref<4x6xf32>
  return %0 : memref<4x6xf32>
}

// -----

// A free for the rank's host queue (zero-offload-to-host's on the GPU's CPU
// replica, zero.queued): zero_rt_host_queue_free of the buffer's pointer.
// A free of the rank's own stays for the memref lowering.
// CHECK-LABEL: func.func @queued_free
// CHECK: %[[H:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<8xf32>
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %[[H]]
// CHECK: call @zero_rt_host_queue_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK: memref.dealloc %{{.*}} : memref<4xf32>
// CHECK-NOT: zero.queued
func.func @queued_free() {
  %h = zero.host_alloc : memref<8xf32>
  %c = memref.alloc() : memref<4xf32>
  memref.dealloc %h {zero.queued} : memref<8xf32>
  memref.dealloc %c : memref<4xf32>
  return
}

