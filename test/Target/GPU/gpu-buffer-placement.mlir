// zero-gpu-buffer-placement: device memory when the host code never touches
// a buffer's elements (kernels may), else managed memory and the first host
// op that does, with its location.

// RUN: zero-opt %s --split-input-file --zero-gpu-buffer-placement | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-gpu-buffer-placement=gpu-collectives=host | FileCheck %s --check-prefix=HOST
// RUN: not zero-opt %s --split-input-file --zero-gpu-buffer-placement=gpu-collectives=pigeon 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: for the --gpu-collectives option: Cannot find option named 'pigeon'!

// Allocation, views and launches only; the kernel's loads do not count.
// CHECK: module attributes {gpu.container_module, zero.gpu_collectives = "device", zero.gpu_memory = "device"}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @double(%b: memref<8xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %b[%i] : memref<8xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %b[%i] : memref<8xf32>
      gpu.return
    }
  }
  func.func @host() -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    %b = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@double blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    %v = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
    %c = memref.cast %v : memref<4xf32, strided<[1]>> to memref<4xf32>
    return %c : memref<4xf32>
  }
}

// -----

// A scalar read on the host (a norm that the host turns into a factor)
// becomes a copy into a stack slot (zero_rt_gpu_read), so the norm can stay
// in device memory. With collectives on the host the module is in managed
// memory anyway, and the read stays as it is.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// CHECK-LABEL: func.func @norm
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<f32>
// CHECK: call @zero_rt_gpu_read(%{{.*}}, %{{.*}}, %c4_i64) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: %[[V:.*]] = memref.load %[[SLOT]][] : memref<f32>
// CHECK: return %[[V]]
// HOST: module attributes {zero.gpu_collectives = "host", zero.gpu_memory = "managed", zero.gpu_memory_reason = "'memref.load' at {{.*}}gpu-buffer-placement.mlir:[[# @LINE + 3]]:8 reads a buffer on the host"}
func.func @norm(%n: memref<f32>) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  %v = memref.load %n[] : memref<f32>
  memref.dealloc %a : memref<8xf32>
  return %v : f32
}

// -----

// An i1 (loss scaling's all-finite flag) is one byte in memory, as the
// kernels store it: its read copies one byte.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// CHECK-LABEL: func.func @flag
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<i1>
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @zero_rt_gpu_read(%{{.*}}, %{{.*}}, %[[ONE]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: memref.load %[[SLOT]][] : memref<i1>
func.func @flag(%f: memref<4xi1>) -> i1 {
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<8xf32>
  %v = memref.load %f[%c2] : memref<4xi1>
  memref.dealloc %a : memref<8xf32>
  return %v : i1
}

// -----

// A copy of a constant (a reduction's initial value, which bufferization
// copies into the buffer the reduction writes) becomes a write of the
// constant's bytes, ordered on the rank's stream: the buffer can stay in
// device memory.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// CHECK-LABEL: func.func @initial_value
// CHECK: %[[INIT:.*]] = memref.get_global @init : memref<4xi1>
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<4xi1>
// CHECK-NOT: memref.copy
// CHECK: %[[BYTES:.*]] = arith.constant 4 : i64
// CHECK: call @zero_rt_gpu_write(%{{.*}}, %{{.*}}, %[[BYTES]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
memref.global "private" constant @init : memref<4xi1> = dense<true>
func.func @initial_value() -> memref<4xi1> {
  %init = memref.get_global @init : memref<4xi1>
  %b = memref.alloc() : memref<4xi1>
  memref.copy %init, %b : memref<4xi1> to memref<4xi1>
  return %b : memref<4xi1>
}

// -----

// A collective: on the device by default (cuda-local, nccl), it touches no
// element on the host; with gpu-collectives=host the local and mpi backends run
// it on host threads, over managed memory.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// HOST: module attributes {zero.gpu_collectives = "host", zero.gpu_memory = "managed", zero.gpu_memory_reason = "'zero.all_reduce_buffer' at {{.*}} is a collective, which the host runs"}
zero.mesh @dp(shape = [4])
func.func @reduce(%g: memref<8xf32>) {
  zero.all_reduce_buffer %g, %g on @dp reduce = sum : memref<8xf32>, memref<8xf32>
  return
}

// -----

// A started collective and its wait, likewise.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// HOST: module attributes {zero.gpu_collectives = "host", zero.gpu_memory = "managed", zero.gpu_memory_reason = "'zero.reduce_scatter_buffer' at {{.*}} is a collective, which the host runs"}
zero.mesh @dp(shape = [4])
func.func @started(%g: memref<8xf32>) -> memref<2xf32> {
  %out = memref.alloc() : memref<2xf32>
  %r = zero.reduce_scatter_buffer %g, %out on @dp reduce = sum : memref<8xf32>, memref<2xf32> -> !zero.request
  zero.wait %r, %g, %out : memref<8xf32>, memref<2xf32>
  return %out : memref<2xf32>
}

// -----

// A copy between buffers on the host.
// CHECK: zero.gpu_memory = "managed", zero.gpu_memory_reason = "'memref.copy' at {{.*}} reads a buffer on the host"
func.func @copy(%a: memref<8xf32>, %b: memref<8xf32>) {
  memref.copy %a, %b : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A buffer passed to a call: the callee may read it.
// CHECK: zero.gpu_memory = "managed", zero.gpu_memory_reason = "'func.call' at {{.*}} passes a buffer to a call"
func.func private @consume(memref<8xf32>)
func.func @call(%a: memref<8xf32>) {
  func.call @consume(%a) : (memref<8xf32>) -> ()
  return
}

// -----

// Buffer deallocation's bookkeeping: small buffers that only the host reads
// and writes, and passes to a private helper that only reads and writes
// them, move to the host's stack (at the function's entry: a loop reuses
// the slot; their deallocations go); they keep nothing out of device memory.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// CHECK-LABEL: func.func @bookkeeping
// CHECK-NEXT: %[[FLAGS:.*]] = memref.alloca() : memref<2xi1>
// CHECK: scf.for
// CHECK-NOT: memref.alloc()
// CHECK: memref.store %{{.*}}, %[[FLAGS]]
// CHECK: call @helper
// CHECK-NOT: memref.dealloc %[[FLAGS]]
// CHECK: return
func.func private @helper(%f: memref<?xi1>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %f[%c0] : memref<?xi1>
  memref.store %x, %f[%c0] : memref<?xi1>
  return
}
func.func @bookkeeping(%n: index, %b: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %flags = memref.alloc() : memref<2xi1>
    memref.store %b, %flags[%c0] : memref<2xi1>
    %dynamic = memref.cast %flags : memref<2xi1> to memref<?xi1>
    func.call @helper(%dynamic) : (memref<?xi1>) -> ()
    %x = memref.load %flags[%c1] : memref<2xi1>
    memref.dealloc %flags : memref<2xi1>
  }
  return
}

// -----

// A small buffer that a kernel also reads is not the host's alone: it stays
// a GPU buffer, and the host's write of one element at a fixed place goes
// through a stack slot (zero_rt_gpu_write).
// CHECK: zero.gpu_memory = "device"
// CHECK-LABEL: func.func @shared
// CHECK: %[[SLOT:.*]] = memref.alloca() : memref<f32>
// CHECK: memref.alloc()
// CHECK: memref.store %{{.*}}, %[[SLOT]][] : memref<f32>
// CHECK: call @zero_rt_gpu_write
// CHECK: gpu.launch_func
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @read(%b: memref<2xf32>) kernel {
      gpu.return
    }
  }
  func.func @shared(%v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %b = memref.alloc() : memref<2xf32>
    memref.store %v, %b[%c0] : memref<2xf32>
    gpu.launch_func @kernels::@read blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<2xf32>)
    memref.dealloc %b : memref<2xf32>
    return
  }
}

// -----

// A host loop over a buffer's elements (no kernel in the loop) would copy
// element by element: it stays, in managed memory.
// CHECK: zero.gpu_memory = "managed", zero.gpu_memory_reason = "'memref.load' at {{.*}} reads a buffer on the host"
// CHECK-LABEL: func.func @host_loop
// CHECK-NOT: zero_rt_gpu_read
func.func @host_loop(%b: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> f32 {
    %x = memref.load %b[%i] : memref<8xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  return %s : f32
}

// -----

// An offloaded update: its loop runs on the host over host memory (an
// argument placed there, zero.host_alloc's copies), which keeps nothing
// out of device memory; the copies between host and device buffers
// become stream-ordered copies that return once done.
// CHECK: module attributes {zero.gpu_collectives = "device", zero.gpu_memory = "device"}
// CHECK-LABEL: func.func @offloaded
// CHECK: %[[GH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: call @zero_rt_gpu_read(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: scf.for
// CHECK: call @zero_rt_gpu_upload(%{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NOT: memref.copy
func.func @offloaded(%m: memref<4xf32> {zero.memory = "host"}, %g: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %gs = memref.subview %g[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %gh = zero.host_alloc : memref<4xf32>
  memref.copy %gs, %gh : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %gh[%i] : memref<4xf32>
    %s = arith.addf %mi, %gi : f32
    memref.store %s, %m[%i] : memref<4xf32>
    memref.store %s, %gh[%i] : memref<4xf32>
  } {zero.host}
  memref.copy %gh, %gs : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
  memref.dealloc %gh : memref<4xf32>
  return
}

// -----

// The frees of device buffers that the rank's host queue only copies down
// (zero-offload-to-host's, zero.queued) are the rank's at once, ordered
// after those copies: zero_rt_gpu_free_after_copies of the buffer's
// pointer. A free of the rank's own stays.
// (The queue's work on the buffers takes their addresses.)
// CHECK-LABEL: func.func @queued_free
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: %[[I:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK: %[[P:.*]] = llvm.inttoptr %[[I]] : i64 to !llvm.ptr
// CHECK: call @zero_rt_gpu_free_after_copies(%[[P]]) : (!llvm.ptr) -> ()
// CHECK-NOT: memref.dealloc %[[B]]
// CHECK: memref.dealloc %[[C]] : memref<4xf32>
// CHECK-NEXT: return
func.func @queued_free() -> (index, index) {
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<4xf32>
  %pb = memref.extract_aligned_pointer_as_index %b : memref<8xf32> -> index
  %pc = memref.extract_aligned_pointer_as_index %c : memref<4xf32> -> index
  memref.dealloc %b {zero.queued} : memref<8xf32>
  memref.dealloc %c : memref<4xf32>
  return %pb, %pc : index, index
}

// -----

// A queued free of a device buffer that a copy of the queue's own thread
// reads (zero_rt_gpu_queue_copy: here a weight gathered on the device,
// copied into its host argument) is the queue's, after that copy:
// zero_rt_gpu_queue_free. One that only an update's copies read stays the
// rank's (zero_rt_gpu_free_after_copies).
// CHECK-LABEL: func.func @queue_frees_after_its_copy
// CHECK: %[[G:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<4xf32>
// CHECK: call @zero_rt_gpu_queue_copy
// CHECK-NEXT: %[[GA:.*]] = memref.extract_aligned_pointer_as_index %[[G]]
// CHECK-NEXT: %[[GI:.*]] = arith.index_cast %[[GA]] : index to i64
// CHECK-NEXT: %[[GP:.*]] = llvm.inttoptr %[[GI]] : i64 to !llvm.ptr
// CHECK-NEXT: call @zero_rt_gpu_queue_free(%[[GP]]) : (!llvm.ptr) -> ()
// CHECK-NEXT: %[[SA:.*]] = memref.extract_aligned_pointer_as_index %[[S]]
// CHECK-NEXT: %[[SI:.*]] = arith.index_cast %[[SA]] : index to i64
// CHECK-NEXT: %[[SP:.*]] = llvm.inttoptr %[[SI]] : i64 to !llvm.ptr
// CHECK-NEXT: call @zero_rt_gpu_free_after_copies(%[[SP]]) : (!llvm.ptr) -> ()
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @queue_frees_after_its_copy(%p: memref<8xf32> {zero.memory = "host"}) -> index {
  %g = memref.alloc() : memref<8xf32>
  %s = memref.alloc() : memref<4xf32>
  %ps = memref.extract_aligned_pointer_as_index %s : memref<4xf32> -> index
  memref.copy %g, %p {zero.queued} : memref<8xf32> to memref<8xf32>
  memref.dealloc %g {zero.queued} : memref<8xf32>
  memref.dealloc %s {zero.queued} : memref<4xf32>
  return %ps : index
}

// -----

// A copy down that the rank only starts (zero.copy_down, after its wait
// for its queue: a weight gathered on the device into its host argument)
// goes on the rank's copy stream (zero_rt_gpu_copy_down), not on its stream
// with a wait (zero_rt_gpu_read); the gathered buffer's free, still
// marked, is the rank's at once, its reuse ordered after that copy
// (zero_rt_gpu_free_after_copies).
// CHECK-LABEL: func.func @copy_down_on_the_copy_stream
// CHECK: %[[G:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @zero_rt_gpu_copy_down(
// CHECK-NOT: zero_rt_gpu_read
// CHECK: %[[GA:.*]] = memref.extract_aligned_pointer_as_index %[[G]]
// CHECK-NEXT: %[[GI:.*]] = arith.index_cast %[[GA]] : index to i64
// CHECK-NEXT: %[[GP:.*]] = llvm.inttoptr %[[GI]] : i64 to !llvm.ptr
// CHECK-NEXT: call @zero_rt_gpu_free_after_copies(%[[GP]]) : (!llvm.ptr) -> ()
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @copy_down_on_the_copy_stream(%p: memref<8xf32> {zero.memory = "host"}) {
  %g = memref.alloc() : memref<8xf32>
  memref.copy %g, %p {zero.copy_down} : memref<8xf32> to memref<8xf32>
  memref.dealloc %g {zero.queued} : memref<8xf32>
  return
}
