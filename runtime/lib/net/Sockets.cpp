//===- Sockets.cpp - framed messages over TCP, with deadlines -------------===//

#include "net/Sockets.h"

#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace zero::rt::net {

const char *const connectionClosed = "the connection was closed";

Clock::time_point deadlineIn(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

double secondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

bool waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    double left = secondsLeft(deadline);
    if (left <= 0)
      return false;
    pollfd p{fd, events, 0};
    int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready > 0)
      return true;
    if (ready < 0 && errno != EINTR)
      return false;
  }
}

namespace {

std::string sendAll(int fd, const char *bytes, size_t size,
                    Clock::time_point deadline) {
  while (size > 0) {
    if (!waitFor(fd, POLLOUT, deadline))
      return "timed out sending";
    ssize_t sent = send(fd, bytes, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent <= 0)
      return std::string("sending failed: ") + std::strerror(errno);
    bytes += sent;
    size -= static_cast<size_t>(sent);
  }
  return "";
}

std::string receiveAll(int fd, char *bytes, size_t size,
                       Clock::time_point deadline) {
  while (size > 0) {
    if (!waitFor(fd, POLLIN, deadline))
      return "timed out waiting";
    ssize_t got = recv(fd, bytes, size, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got == 0)
      return connectionClosed;
    if (got < 0)
      return errno == ECONNRESET
                 ? connectionClosed
                 : std::string("receiving failed: ") + std::strerror(errno);
    bytes += got;
    size -= static_cast<size_t>(got);
  }
  return "";
}

} // namespace

std::string sendFrame(int fd, const std::string &frame,
                      Clock::time_point deadline) {
  uint32_t size = static_cast<uint32_t>(frame.size());
  unsigned char header[4] = {static_cast<unsigned char>(size),
                             static_cast<unsigned char>(size >> 8),
                             static_cast<unsigned char>(size >> 16),
                             static_cast<unsigned char>(size >> 24)};
  if (std::string error =
          sendAll(fd, reinterpret_cast<char *>(header), 4, deadline);
      !error.empty())
    return error;
  return sendAll(fd, frame.data(), frame.size(), deadline);
}

std::string receiveFrame(int fd, std::string &frame,
                         Clock::time_point deadline) {
  unsigned char header[4];
  if (std::string error =
          receiveAll(fd, reinterpret_cast<char *>(header), 4, deadline);
      !error.empty())
    return error;
  uint32_t size = header[0] | header[1] << 8 | header[2] << 16 |
                  static_cast<uint32_t>(header[3]) << 24;
  if (size > (64u << 20))
    return "a frame of " + std::to_string(size) + " bytes (not zero's)";
  frame.assign(size, '\0');
  return receiveAll(fd, frame.data(), size, deadline);
}

addrinfo *resolve(const std::string &address, int port, bool passive,
                  std::string &error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo *found = nullptr;
  std::string service = std::to_string(port);
  if (int code = getaddrinfo(passive ? nullptr : address.c_str(),
                             service.c_str(), &hints, &found)) {
    error = "cannot resolve " + address + ": " + gai_strerror(code);
    return nullptr;
  }
  return found;
}

int connectTo(const std::string &address, int port, Clock::time_point deadline,
              std::string &error) {
  error = "no address";
  for (;;) {
    addrinfo *found = resolve(address, port, false, error);
    if (!found)
      return -1;
    int fd = -1;
    for (addrinfo *a = found; a && fd < 0; a = a->ai_next) {
      int candidate = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (candidate < 0)
        continue;
      if (::connect(candidate, a->ai_addr, a->ai_addrlen) == 0)
        fd = candidate;
      else {
        error = std::strerror(errno);
        close(candidate);
      }
    }
    freeaddrinfo(found);
    if (fd >= 0) {
      setNoDelay(fd);
      return fd;
    }
    if (secondsLeft(deadline) <= 0)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

} // namespace zero::rt::net
