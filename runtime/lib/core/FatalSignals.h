//===- FatalSignals.h - a fault names its rank, then ends -------*- C++ -*-===//
//
// A fault in a step's compiled code or in the runtime (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL) ends the process: every rank with it. Without a word, a
// launch that ended so says nothing of where; these handlers print the
// faulting rank, the address, and the object and symbol of the faulting
// instruction first, then let the signal take its previous course (the
// default ends the process, with a core where enabled; a sanitizer's
// handler reports on).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_FATALSIGNALS_H
#define ZERO_RUNTIME_FATALSIGNALS_H

#include <csignal>
#include <memory>

namespace zero::rt {

/// Installs the handlers, once per process; the handlers before them are
/// kept and run after the report.
void reportFatalSignals();

/// An alternate signal stack for the calling thread while it lives (a
/// rank's, its host queue's, a host worker's), so that a thread whose own
/// stack overflowed is reported too (the handler cannot run on the stack
/// that overflowed). The thread's previous one, if any, is restored at the
/// end.
class FaultStack {
public:
  FaultStack();
  ~FaultStack();
  FaultStack(const FaultStack &) = delete;
  FaultStack &operator=(const FaultStack &) = delete;

private:
  std::unique_ptr<char[]> memory;
  bool installed = false;
  /// The thread's alternate stack before this one.
  stack_t previous{};
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_FATALSIGNALS_H
