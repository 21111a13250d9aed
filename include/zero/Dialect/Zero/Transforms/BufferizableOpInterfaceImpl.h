//===- BufferizableOpInterfaceImpl.h - bufferizing zero ops -----*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace zero {
/// Attaches BufferizableOpInterface to the zero collectives, so that
/// One-Shot Bufferize turns them into their destination-passing `*_buffer`
/// forms (a fresh output buffer each) and `zero.shard_slice` into a
/// `memref.subview` at the rank's offset (no copy).
void registerBufferizableOpInterfaceExternalModels(
    mlir::DialectRegistry &registry);
} // namespace zero

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
