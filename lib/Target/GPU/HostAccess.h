//===- HostAccess.h - what the host does to GPU buffers ---------*- C++ -*-===//
//
// The host code of a GPU program allocates, launches and calls the runtime;
// the passes that place its buffers (zero-gpu-buffer-placement) and order it
// against the device (zero-gpu-defer-host-waits) both ask which of its ops
// read or write a buffer's elements on the host.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_CONVERSION_HOSTACCESS_H
#define ZERO_LIB_CONVERSION_HOSTACCESS_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"

#include <string>

namespace zero {

/// Whether `value` is (a view of) a buffer on the host's stack.
bool onHostStack(mlir::Value value);

/// Whether `value` is (a view of) a buffer in host memory: on the host's
/// stack, made by `zero.host_alloc`, an argument that zero-offload-state
/// placed there (`zero.memory = "host"`), or an iter_arg or result of a
/// loop that carries it there (`zero.host_iter_args`, whose initial and
/// yielded buffers zero-offload-to-host places in host memory).
bool inHostMemory(mlir::Value value);

/// Whether `copy` copies from a buffer outside host memory into host
/// memory: down the link, from the device.
bool copiesDown(mlir::Operation *copy);

/// Whether `op` is code the GPU's placement of buffers does not look into:
/// a GPU module (kernels), or a host task.
bool isOutsidePlacement(mlir::Operation *op);

/// How `op`, on the host, touches the elements of a buffer that is not on
/// the host's stack ("" when it does not); with `hostMemoryIsOwn`, nor in
/// host memory (inHostMemory). With `hostCollectives`, a collective and the
/// wait that completes it count: the backend moves data on host threads.
std::string touchesElements(mlir::Operation *op, bool hostCollectives,
                            bool hostMemoryIsOwn = false);

} // namespace zero

#endif // ZERO_LIB_CONVERSION_HOSTACCESS_H
