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
class Module;
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

/// Before optimization: makes the stack slots of each kernel launch (the
/// struct of its arguments and the array of pointers to them, which MLIR's
/// translation of gpu.launch_func allocates where the launch is) static
/// slots of its function's entry block, which the launches share: the
/// launch reads them when it is made. Allocated at the launch, a loop of
/// launches (a training loop's steps, a nest's sequential loop around its
/// kernel) grew the stack by them each iteration until it overflowed, and
/// code generation's fast path stopped at the first of them.
void makeLaunchSlotsStatic(llvm::Module &module);

} // namespace zero::exec

#endif // ZERO_EXECUTION_PACKEDENTRY_H
