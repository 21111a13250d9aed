// zero-gpu-modules-to-binary: each gpu.module serialized on a thread of its
// own, then replaced by a gpu.binary in the modules' order, as upstream's
// gpu-module-to-binary makes it: the output is upstream's, with threads or
// without. PTX (format=isa) needs no CUDA toolkit.
// RUN: zero-opt %s --zero-gpu-modules-to-binary=format=isa | FileCheck %s
// The serializer records how long each took (LLVMIRToISATimeInMs), which
// the comparison leaves out.
// RUN: zero-opt %s --zero-gpu-modules-to-binary=format=isa | sed 's/LLVMIRToISATimeInMs = [0-9]* : i64, //' > %t.ours
// RUN: zero-opt %s --zero-gpu-modules-to-binary=format=isa --mlir-disable-threading | sed 's/LLVMIRToISATimeInMs = [0-9]* : i64, //' > %t.serial
// RUN: zero-opt %s --gpu-module-to-binary=format=isa | sed 's/LLVMIRToISATimeInMs = [0-9]* : i64, //' > %t.upstream
// RUN: diff %t.ours %t.upstream
// RUN: diff %t.serial %t.upstream

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK-NEXT: gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.visible .entry scale(
// CHECK-NEXT: gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.visible .entry shift(
// CHECK-NEXT: gpu.binary @third [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.visible .entry twice(
// CHECK-NEXT: {{^}}}{{$}}
module attributes {gpu.container_module} {
  gpu.module @first [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @scale(%p: !llvm.ptr, %s: f32) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr -> f32
      %y = llvm.fmul %x, %s : f32
      llvm.store %y, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @second [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @shift(%p: !llvm.ptr, %s: f32) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr -> f32
      %y = llvm.fadd %x, %s : f32
      llvm.store %y, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @third [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
    llvm.func @twice(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr -> f32
      %y = llvm.fadd %x, %x : f32
      llvm.store %y, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}
