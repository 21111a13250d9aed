//===- Sockets.h - framed messages over TCP, with deadlines -----*- C++ -*-===//
//
// Frames on the wire: a 4-byte little-endian length, then the bytes. Every
// call takes a deadline and returns "" or why it failed; none blocks past
// its deadline or raises SIGPIPE. The rendezvous of the nccl backend and the
// loss watch of the mpi backend talk this way.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_SOCKETS_H
#define ZERO_RUNTIME_LIB_SOCKETS_H

#include <chrono>
#include <string>

struct addrinfo;

namespace zero::rt::net {

using Clock = std::chrono::steady_clock;

/// The deadline `seconds` from now.
Clock::time_point deadlineIn(double seconds);
/// Seconds until `deadline` (negative once it passed).
double secondsLeft(Clock::time_point deadline);

/// Waits until `fd` is ready for `events` (poll's) or the deadline passes.
bool waitFor(int fd, short events, Clock::time_point deadline);

/// The error message of a closed connection, as receiveFrame returns it.
extern const char *const connectionClosed;

std::string sendFrame(int fd, const std::string &frame,
                      Clock::time_point deadline);
/// Frames of more than 64 MiB are refused (no zero peer sends one).
std::string receiveFrame(int fd, std::string &frame,
                         Clock::time_point deadline);

/// Resolves `address`:`port` for TCP (a passive one: any local address).
/// Null and `error` set on failure; else free it with freeaddrinfo.
addrinfo *resolve(const std::string &address, int port, bool passive,
                  std::string &error);

/// A socket connected to `address`:`port`, retrying until the deadline; -1
/// and `error` set on failure.
int connectTo(const std::string &address, int port, Clock::time_point deadline,
              std::string &error);

/// Disables Nagle's algorithm: frames here are small and awaited.
void setNoDelay(int fd);

} // namespace zero::rt::net

#endif // ZERO_RUNTIME_LIB_SOCKETS_H
