//===- FatalSignals.cpp - a fault names its rank, then ends ---------------===//
//
// The handler runs after a fault, in whatever state the process is: it
// formats its line without allocating (no printf, no std::string) and
// writes it with one write(2).
//
//===----------------------------------------------------------------------===//

#include "core/FatalSignals.h"

#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <ucontext.h>
#include <unistd.h>

using namespace zero::rt;

namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

/// The actions the handlers replaced, by signal number.
struct sigaction previousActions[NSIG];

/// A line built in place, cut at its capacity.
class Line {
public:
  Line &operator<<(const char *text) {
    while (text && *text && size < sizeof(text_) - 1)
      text_[size++] = *text++;
    return *this;
  }
  /// `value` in `base` (10 or 16).
  Line &number(uint64_t value, unsigned base) {
    char digits[64];
    int n = 0;
    do
      digits[n++] = "0123456789abcdef"[value % base];
    while (value /= base);
    while (n > 0 && size < sizeof(text_) - 1)
      text_[size++] = digits[--n];
    return *this;
  }
  Line &hex(uintptr_t value) { return (*this << "0x").number(value, 16); }
  void write(int fd) {
    text_[size++] = '\n';
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, text_ + done, size - done);
      if (n <= 0)
        return;
      done += size_t(n);
    }
  }

private:
  char text_[1024];
  size_t size = 0;
};

const char *signalName(int signal) {
  switch (signal) {
  case SIGSEGV:
    return "SIGSEGV (an access to memory it may not touch)";
  case SIGBUS:
    return "SIGBUS (an access to memory that is not there)";
  case SIGFPE:
    return "SIGFPE (an arithmetic fault)";
  case SIGILL:
    return "SIGILL (an instruction this CPU does not have)";
  }
  return "a fatal signal";
}

/// The address of the faulting instruction, where the architecture's
/// context gives it.
uintptr_t faultingInstruction(void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  if (!uc)
    return 0;
#if defined(__x86_64__)
  return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uintptr_t(uc->uc_mcontext.pc);
#else
  return 0;
#endif
}

void onFault(int signal, siginfo_t *info, void *context) {
  int saved = errno;
  Line line;
  line << "zero: error: ";
  if (zero_rank *rank = zero_bound_rank()) {
    line << "rank ";
    line.number(uint64_t(zero_rank_id(rank)), 10) << ": ";
  } else {
    line << "a thread of no rank (a host queue's or a worker's): ";
  }
  line << signalName(signal);
  if (signal == SIGSEGV || signal == SIGBUS) {
    line << " at address ";
    line.hex(uintptr_t(info->si_addr));
  }
  if (uintptr_t pc = faultingInstruction(context)) {
    line << ", in ";
    Dl_info where{};
    if (dladdr(reinterpret_cast<void *>(pc), &where) && where.dli_fname) {
      // The object, and the symbol the instruction is in, with its offset.
      bool named = where.dli_sname && where.dli_saddr;
      line << where.dli_fname << " (" << (named ? where.dli_sname : "") << "+";
      line.hex(pc - uintptr_t(named ? where.dli_saddr : where.dli_fbase))
          << ")";
    } else {
      line.hex(pc);
    }
  }
  line << "; the process ends, and every rank in it";
  line.write(STDERR_FILENO);
  // The signal's course before these handlers: for a fault, returning
  // runs the instruction again, which faults into it; a signal sent
  // (kill, raise) is sent again.
  sigaction(signal, &previousActions[signal], nullptr);
  if (info->si_code <= 0)
    raise(signal);
  errno = saved;
}

} // namespace

void zero::rt::reportFatalSignals() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int signal : kFaultSignals)
      sigaction(signal, &action, &previousActions[signal]);
  });
}

FaultStack::FaultStack() {
  long wanted = sysconf(_SC_SIGSTKSZ);
  size_t bytes = std::max<size_t>(wanted > 0 ? size_t(wanted) : 0, 64 << 10);
  memory.reset(new char[bytes]);
  stack_t stack{};
  stack.ss_sp = memory.get();
  stack.ss_size = bytes;
  installed = sigaltstack(&stack, &previous) == 0;
}

FaultStack::~FaultStack() {
  if (!installed)
    return;
  // The thread's previous stack, or none (a disabled one).
  if (previous.ss_flags & SS_DISABLE) {
    stack_t none{};
    none.ss_flags = SS_DISABLE;
    sigaltstack(&none, nullptr);
  } else {
    sigaltstack(&previous, nullptr);
  }
}
