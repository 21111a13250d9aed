//===- Backend.cpp - what every backend shares ----------------------------===//
//
// The GPU code a rank runs (kernels, cuBLAS calls) is timed by the runtime's
// CUDA support whatever moves its collectives; the backend is where the
// generic C interface asks for it.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "backends/CudaDriver.h"

using namespace zero::rt;

void Backend::setTracing(bool on) { cuda::setKernelTracing(on); }

std::vector<ComputeSpan> Backend::takeComputeSpans() {
  std::vector<ComputeSpan> spans;
  for (cuda::KernelSpan &kernel : cuda::takeKernelSpans())
    spans.push_back({std::move(kernel.name), kernel.begin, kernel.end});
  return spans;
}
