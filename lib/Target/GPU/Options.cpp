//===- Options.cpp - the GPU target's settings ----------------------------===//

#include "zero/Target/GPU/Options.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace zero;

llvm::cl::ValuesClass zero::gpuFormatValues() {
  return llvm::cl::values(
      clEnumValN(GpuFormat::Auto, "auto",
                 "bin where ptxas is found (in cuda-path/bin or on PATH), "
                 "else isa"),
      clEnumValN(GpuFormat::Bin, "bin", "a cubin, made by ptxas"),
      clEnumValN(GpuFormat::Isa, "isa",
                 "PTX, which the driver compiles when the artifact loads"));
}

llvm::cl::ValuesClass zero::gpuCollectivesValues() {
  return llvm::cl::values(
      clEnumValN(GpuCollectives::Device, "device",
                 "on the GPU: the cuda-local and nccl backends; buffers may "
                 "stay in device memory"),
      clEnumValN(GpuCollectives::Host, "host",
                 "on the host: the local and mpi backends, on managed "
                 "memory"));
}

llvm::StringRef zero::stringifyGpuCollectives(GpuCollectives collectives) {
  return collectives == GpuCollectives::Host ? "host" : "device";
}

bool zero::hasPtxas(llvm::StringRef cudaPath) {
  llvm::SmallString<256> path(cudaPath);
  llvm::sys::path::append(path, "bin", "ptxas");
  return llvm::sys::fs::can_execute(path) ||
         bool(llvm::sys::findProgramByName("ptxas"));
}

llvm::Expected<GpuFormat> zero::resolveGpuFormat(GpuFormat format,
                                                 llvm::StringRef cudaPath) {
  if (format == GpuFormat::Isa)
    return GpuFormat::Isa;
  bool ptxas = hasPtxas(cudaPath);
  if (format == GpuFormat::Auto)
    return ptxas ? GpuFormat::Bin : GpuFormat::Isa;
  if (!ptxas)
    return llvm::createStringError(
        "gpu-format=bin needs ptxas, which is neither in %s/bin nor on PATH: "
        "give the CUDA toolkit with cuda-path, or embed PTX with "
        "gpu-format=isa (or auto)",
        cudaPath.str().c_str());
  return GpuFormat::Bin;
}
