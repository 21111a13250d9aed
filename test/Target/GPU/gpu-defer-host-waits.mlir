// zero-gpu-defer-host-waits: the host waits for the rank's stream only
// before it touches a buffer's elements, calls what it cannot see into, or
// leaves a block; a wait followed only by stream-ordered work goes.

// RUN: zero-opt %s --split-input-file --zero-gpu-defer-host-waits | FileCheck %s

// A matmul call (cuBLAS on the rank's stream) and the next kernel queue
// behind the first kernel; the wait before the return stays.
// CHECK-LABEL: func.func @matmul_between_kernels
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: gpu.launch_func async [%[[T0]]] @kernels::@fill
// CHECK-NEXT: call @zero_rt_gpu_matmul
// CHECK-NEXT: %[[T1:.*]] = gpu.wait async
// CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@fill
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func private @zero_rt_gpu_matmul(!llvm.ptr)
  func.func @matmul_between_kernels(%b: memref<8xf32>, %p: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    call @zero_rt_gpu_matmul(%p) : (!llvm.ptr) -> ()
    %t2 = gpu.wait async
    %t3 = gpu.launch_func async [%t2] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t3]
    return
  }
}

// -----

// The rank's free of a buffer its copies down read
// (zero_rt_gpu_free_after_copies) is ordered after those, and the rank's
// later work is on its stream: no wait.
// CHECK-LABEL: func.func @queued_free
// CHECK: gpu.launch_func async
// CHECK-NEXT: call @zero_rt_gpu_free_after_copies
// CHECK-NEXT: %[[T:.*]] = gpu.wait async
// CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T]]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func private @zero_rt_gpu_free_after_copies(!llvm.ptr)
  func.func @queued_free(%b: memref<8xf32>, %q: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    call @zero_rt_gpu_free_after_copies(%q) : (!llvm.ptr) -> ()
    %t2 = gpu.wait async
    %t3 = gpu.launch_func async [%t2] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t3]
    return
  }
}

// -----

// A scalar written through a stack slot, allocation and freeing need no
// wait; the host's read of a buffer in managed memory does, so the wait
// moves to just before it.
// CHECK-LABEL: func.func @read_after_write
// CHECK: gpu.launch_func async
// CHECK-NEXT: memref.store %{{.*}}, %[[SLOT:.*]][] : memref<f32>
// CHECK-NEXT: call @zero_rt_gpu_write
// CHECK-NEXT: %[[A:.*]] = memref.alloc
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: gpu.wait [%{{.*}}]
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func private @zero_rt_gpu_write(!llvm.ptr, !llvm.ptr, i64)
  func.func @read_after_write(%b: memref<8xf32>, %n: memref<f32>, %p: !llvm.ptr, %q: !llvm.ptr) -> f32 {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : i64
    %zero = arith.constant 0.0 : f32
    %slot = memref.alloca() : memref<f32>
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    memref.store %zero, %slot[] : memref<f32>
    call @zero_rt_gpu_write(%p, %q, %c4) : (!llvm.ptr, !llvm.ptr, i64) -> ()
    %a = memref.alloc() : memref<16xf32>
    memref.dealloc %a : memref<16xf32>
    %v = memref.load %n[] : memref<f32>
    return %v : f32
  }
}

// -----

// Collectives on the device (cuda-local, nccl) are ordered against the
// rank's stream by the runtime: no wait before the start or the wait of
// one.
// CHECK-LABEL: func.func @device_collective
// CHECK: gpu.launch_func async
// CHECK-NEXT: %[[R:.*]] = zero.all_reduce_buffer
// CHECK-NEXT: zero.wait %[[R]]
// CHECK-NEXT: %[[T:.*]] = gpu.wait async
// CHECK-NEXT: gpu.launch_func async [%[[T]]]
module attributes {gpu.container_module, zero.gpu_collectives = "device"} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  zero.mesh @dp(shape = [4])
  func.func @device_collective(%b: memref<8xf32>, %o: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    %r = zero.all_reduce_buffer %b, %o on @dp reduce = sum : memref<8xf32>, memref<8xf32> -> !zero.request
    gpu.wait [%t1]
    zero.wait %r, %b, %o : memref<8xf32>, memref<8xf32>
    %t2 = gpu.wait async
    %t3 = gpu.launch_func async [%t2] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%o : memref<8xf32>)
    gpu.wait [%t3]
    return
  }
}

// -----

// Collectives on the host (the local and mpi backends) read the buffers on
// host threads: the kernel must be done first.
// CHECK-LABEL: func.func @host_collective
// CHECK: %[[T:.*]] = gpu.launch_func async
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: zero.all_reduce_buffer
module attributes {gpu.container_module, zero.gpu_collectives = "host"} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  zero.mesh @dp(shape = [4])
  func.func @host_collective(%b: memref<8xf32>, %o: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    zero.all_reduce_buffer %b, %o on @dp reduce = sum : memref<8xf32>, memref<8xf32>
    return
  }
}

// -----

// A call the pass cannot see into, and the end of a loop's body, keep
// their waits: the next iteration may begin with a host access.
// CHECK-LABEL: func.func @barriers
// CHECK: %[[T1:.*]] = gpu.launch_func async
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: call @unknown
// CHECK: scf.for
// CHECK: %[[T2:.*]] = gpu.launch_func async
// CHECK-NEXT: arith.addi
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: }
module attributes {gpu.container_module, zero.gpu_collectives = "device"} {
  gpu.module @kernels {
    gpu.func @fill(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  func.func private @unknown(memref<8xf32>)
  func.func @barriers(%b: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    gpu.wait [%t1]
    call @unknown(%b) : (memref<8xf32>) -> ()
    scf.for %i = %c0 to %c4 step %c1 {
      %t2 = gpu.wait async
      %t3 = gpu.launch_func async [%t2] @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
      gpu.wait [%t3]
      %j = arith.addi %i, %c1 : index
    }
    return
  }
}
