// zero-gpu-kernel-names: outlined kernels and their modules named as PTX
// identifiers, every launch updated; names that are identifiers already
// stay, and a rename never meets another symbol.

// RUN: zero-opt %s --zero-gpu-kernel-names | FileCheck %s
// And in zero-to-nvvm, a function whose name PTX cannot spell gets a kernel
// that compiles.
// RUN: sed 's/@step/@a.b/' %zero_src/examples/sgd.mlir | zero-opt --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=PTX
// PTX: gpu.binary @a_b_kernel
// PTX-SAME: .entry a_b_kernel

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func @a_b_kernel()
// CHECK: gpu.launch_func @a_b_kernel_1::@a_b_kernel
// CHECK: gpu.launch_func @_1x_kernel::@_1x_kernel
// CHECK: gpu.launch_func @ok_kernel::@ok_kernel
// CHECK: gpu.module @a_b_kernel_1
// CHECK: gpu.func @a_b_kernel
// CHECK: gpu.module @_1x_kernel
// CHECK: gpu.func @_1x_kernel
// CHECK: gpu.module @ok_kernel
// CHECK: gpu.func @ok_kernel
module attributes {gpu.container_module} {
  // Takes the name the first module would get.
  func.func @a_b_kernel() {
    return
  }
  func.func @host(%n: index) {
    gpu.launch_func @a.b_kernel::@a.b_kernel blocks in (%n, %n, %n) threads in (%n, %n, %n)
    gpu.launch_func @"1x_kernel"::@"1x_kernel" blocks in (%n, %n, %n) threads in (%n, %n, %n)
    gpu.launch_func @ok_kernel::@ok_kernel blocks in (%n, %n, %n) threads in (%n, %n, %n)
    return
  }
  gpu.module @a.b_kernel {
    gpu.func @a.b_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @"1x_kernel" {
    gpu.func @"1x_kernel"() kernel {
      gpu.return
    }
  }
  gpu.module @ok_kernel {
    gpu.func @ok_kernel() kernel {
      gpu.return
    }
  }
}
