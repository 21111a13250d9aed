// RUN: zero-opt %s --split-input-file --zero-gpu-host-memory --verify-diagnostics | FileCheck %s

// The host's malloc and free become the runtime's managed allocations.
// CHECK-LABEL: llvm.func @zero_rt_gpu_alloc(i64) -> !llvm.ptr
// CHECK: llvm.func @zero_rt_gpu_free(!llvm.ptr)
// CHECK-LABEL: llvm.func @host
// CHECK: llvm.call @zero_rt_gpu_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.call @zero_rt_gpu_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NOT: @malloc
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @host(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// MLIR's generic allocation functions beside malloc: both go to the
// runtime's allocator.
// CHECK-LABEL: llvm.func @zero_rt_gpu_alloc(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @both
// CHECK: llvm.call @zero_rt_gpu_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.call @zero_rt_gpu_alloc(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.call @zero_rt_gpu_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK: llvm.call @zero_rt_gpu_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NOT: _mlir_memref_to_llvm
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @both(%n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %q = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.call @_mlir_memref_to_llvm_free(%q) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// Nothing to do: a module without allocations is unchanged.
// CHECK-LABEL: llvm.func @no_allocations
// CHECK-NOT: zero_rt_gpu
llvm.func @no_allocations() {
  llvm.return
}

// -----

// A module that already has a function of the runtime's name is reported.
llvm.func @malloc(i64) -> !llvm.ptr
// expected-error @+1 {{zero-gpu-host-memory: @zero_rt_gpu_alloc is already defined; cannot redirect @malloc to it}}
llvm.func @zero_rt_gpu_alloc(i64) -> !llvm.ptr

// -----

// Buffers the host never touches (zero-gpu-buffer-placement) are device
// memory.
// CHECK-LABEL: llvm.func @zero_rt_gpu_alloc_device(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @device
// CHECK: llvm.call @zero_rt_gpu_alloc_device(%{{.*}}) : (i64) -> !llvm.ptr
module attributes {zero.gpu_memory = "device"} {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @device(%n: i64) {
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// zero.host_alloc's buffers (an offloaded update's) are pinned host memory
// beside the GPU; they are freed like the others.
// CHECK-LABEL: llvm.func @zero_rt_gpu_alloc_host(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @offloaded
// CHECK: llvm.call @zero_rt_gpu_alloc_host(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.call @zero_rt_gpu_free(%{{.*}}) : (!llvm.ptr) -> ()
// CHECK-NOT: @zero_rt_host_alloc
llvm.func @zero_rt_host_alloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @offloaded(%n: i64) {
  %p = llvm.call @zero_rt_host_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}
