//===- Options.td - the GPU target's settings, declared once -*- tablegen -*-===//
//
// The settings of the CUDA lowering that more than one pass or pipeline
// takes (zero/Target/GPU/Options.h has their C++ types): one name, one
// default and one description each.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_GPU_OPTIONS_TD
#define ZERO_TARGET_GPU_OPTIONS_TD

include "mlir/Pass/PassBase.td"

defvar gpuCollectivesOption =
    Option<"gpuCollectives", "gpu-collectives", "::zero::GpuCollectives",
           /*default=*/"::zero::GpuCollectives::Device",
           "Where collectives move data: device (the cuda-local and nccl "
           "backends) or host (local and mpi, on managed memory)",
           [{::zero::gpuCollectivesValues()}]>;

#endif // ZERO_TARGET_GPU_OPTIONS_TD
