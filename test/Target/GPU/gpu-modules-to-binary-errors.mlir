// zero-gpu-modules-to-binary's errors, each naming the pass.
//
// A module without a target cannot be serialized: an error on it.
// RUN: not zero-opt %s --split-input-file --zero-gpu-modules-to-binary=format=isa 2>&1 | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: error: zero-gpu-modules-to-binary: @bare has no target attribute (gpu-nvvm-attach-target attaches one)
module attributes {gpu.container_module} {
  gpu.module @bare {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// A cubin (format=bin) needs ptxas: without it in the toolkit or on PATH,
// an error that says what to give, and nothing is serialized.
// RUN: not env PATH=/usr/bin:/bin zero-opt %s --split-input-file --zero-gpu-modules-to-binary='format=bin cuda-path=%t.none' 2>&1 | FileCheck %s --check-prefix=BIN
// BIN: error: zero-gpu-modules-to-binary: gpu-format=bin needs ptxas, which is neither in {{.*}}none/bin nor on PATH: give the CUDA toolkit with cuda-path, or embed PTX with gpu-format=isa (or auto)
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
