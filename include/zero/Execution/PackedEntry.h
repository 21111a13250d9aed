//===- PackedEntry.h - a program's entry as its packed export --*- C++ -*-===//
//
// The LLVM-level rewrites of a program's entry that zero-compile's artifacts
// and zero-run's JIT share: the entry as `void zero_artifact_entry(void
// **args)` (runtime/include/zero/runtime/Artifact.h), and how code
// generation treats it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_PACKEDENTRY_H
#define ZERO_EXECUTION_PACKEDENTRY_H

namespace llvm {
class Function;
} // namespace llvm

namespace zero::exec {

/// Rewrites `entry` (translated from MLIR, not yet optimized) as
/// `void zero_artifact_entry(void **args)`, the convention of MLIR's
/// ExecutionEngine::invokePacked: argument i is read from where args[i]
/// points, and the results are written, laid out as the entry's return
/// type, where the last pointer points. The body moves into the export, so
/// no function takes thousands of scalars or returns an aggregate of
/// thousands of memrefs. A function that the program still calls keeps a
/// copy. Returns the export.
llvm::Function &makePackedEntry(llvm::Function &entry);

/// Before optimization: keeps the optimizer out of the packed entry and has
/// code generation select its instructions quickly (FastISel, no machine
/// scheduling) when every loop in it calls a function, i.e. its work is in
/// outlined nests and the runtime. Its descriptors are stored field by
/// field first, as the optimizer would have stored them.
void selectEntryQuickly(llvm::Function &entry);

} // namespace zero::exec

#endif // ZERO_EXECUTION_PACKEDENTRY_H
