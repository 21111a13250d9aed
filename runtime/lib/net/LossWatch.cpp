//===- LossWatch.cpp - survivors name a rank whose process vanished -------===//

#include "net/LossWatch.h"
#include "net/Sockets.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

using namespace zero::rt;
using namespace zero::rt::net;

namespace {

/// Where the SIGTERM handler writes: the one watch that installed it.
std::atomic<int> signalWakeFd{-1};
struct sigaction previousTermAction;

void onTerm(int) {
  int saved = errno;
  int fd = signalWakeFd.load();
  char byte = 't';
  if (fd >= 0)
    (void)!write(fd, &byte, 1);
  errno = saved;
}

/// A TCP listener on any local address and a port the kernel picks.
int listenAnywhere(int &port, std::string &error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr *>(&address), length) != 0 ||
      listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
    error = std::string("listening: ") + std::strerror(errno);
    close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0])
    return "localhost";
  return name;
}

/// The previous rank's connection, from `listener`, checked to be its.
int acceptFrom(int listener, int32_t expected, Clock::time_point deadline,
               std::string &error) {
  while (waitFor(listener, POLLIN, deadline)) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    std::string hello;
    if (receiveFrame(fd, hello, deadline).empty() &&
        hello == "ZWATCH " + std::to_string(expected)) {
      setNoDelay(fd);
      return fd;
    }
    close(fd);
  }
  error = "rank " + std::to_string(expected) + " did not connect";
  return -1;
}

} // namespace

std::unique_ptr<LossWatch> LossWatch::start(int32_t rank, int32_t size,
                                            const AllGather &allGather,
                                            double timeoutSeconds,
                                            std::string &error) {
  error.clear();
  if (size < 2)
    return nullptr;
  // Every rank takes part in the gather, even one that cannot listen, so
  // that no rank waits for it there.
  int port = 0;
  int listener = listenAnywhere(port, error);
  std::vector<std::string> all =
      allGather(listener < 0 ? "" : hostName() + " " + std::to_string(port));
  std::unique_ptr<LossWatch> watch(new LossWatch(rank));
  int32_t previous = (rank + size - 1) % size, next = (rank + 1) % size;
  watch->sides[0].rank = previous;
  watch->sides[1].rank = next;
  auto deadline = deadlineIn(timeoutSeconds);
  std::istringstream where(all.size() == size_t(size) ? all[next] : "");
  std::string host;
  int nextPort = 0;
  if (listener >= 0 && !(where >> host >> nextPort))
    error = "rank " + std::to_string(next) + " has no address";
  if (error.empty()) {
    std::string why;
    watch->sides[1].fd = connectTo(host, nextPort, deadline, why);
    if (watch->sides[1].fd < 0)
      error = "cannot reach rank " + std::to_string(next) + " at " + host +
              ":" + std::to_string(nextPort) + ": " + why;
    else
      error = sendFrame(watch->sides[1].fd, "ZWATCH " + std::to_string(rank),
                        deadline);
  }
  if (error.empty())
    watch->sides[0].fd = acceptFrom(listener, previous, deadline, error);
  if (listener >= 0)
    close(listener);
  int pipeFds[2];
  if (error.empty() && pipe2(pipeFds, O_CLOEXEC | O_NONBLOCK) != 0)
    error = std::string("pipe: ") + std::strerror(errno);
  if (!error.empty())
    return nullptr; // the destructor closes what was opened
  watch->wakeRead = pipeFds[0];
  watch->wakeWrite = pipeFds[1];
  int none = -1;
  if (signalWakeFd.compare_exchange_strong(none, watch->wakeWrite)) {
    struct sigaction action {};
    action.sa_handler = onTerm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, &previousTermAction);
  }
  watch->thread = std::thread([w = watch.get()] { w->run(); });
  return watch;
}

LossWatch::~LossWatch() {
  tell("bye");
  if (thread.joinable()) {
    char byte = 's';
    (void)!write(wakeWrite, &byte, 1);
    thread.join();
  }
  int mine = wakeWrite;
  if (mine >= 0 && signalWakeFd.compare_exchange_strong(mine, -1))
    sigaction(SIGTERM, &previousTermAction, nullptr);
  for (int fd : {sides[0].fd, sides[1].fd, wakeRead, wakeWrite})
    if (fd >= 0)
      close(fd);
}

void LossWatch::sayFailed() { tell("failed " + std::to_string(rank)); }

void LossWatch::tell(const std::string &frame, const Side *except) {
  std::lock_guard<std::mutex> lock(sendMutex);
  auto deadline = deadlineIn(0.5);
  for (Side &side : sides)
    if (side.fd >= 0 && &side != except)
      (void)sendFrame(side.fd, frame, deadline);
}

void LossWatch::run() {
  bool term = false;
  for (;;) {
    pollfd fds[3] = {{wakeRead, POLLIN, 0},
                     {sides[0].fd, POLLIN, 0},
                     {sides[1].fd, POLLIN, 0}};
    // After SIGTERM: only what has arrived already, then the verdict.
    int ready = poll(fds, 3, term ? 0 : -1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (fds[0].revents & POLLIN) {
      char bytes[16];
      ssize_t got;
      while ((got = read(wakeRead, bytes, sizeof bytes)) > 0)
        for (ssize_t i = 0; i < got; ++i) {
          if (bytes[i] == 's')
            return;
          term = true;
        }
    }
    for (int i = 0; i < 2; ++i)
      if (fds[i + 1].revents)
        receive(sides[i]);
    if (term && ready <= 0)
      terminated();
  }
}

void LossWatch::receive(Side &side) {
  std::string frame;
  std::string error = receiveFrame(side.fd, frame, deadlineIn(1));
  if (!error.empty()) {
    if (!side.closing)
      lost(side.rank, &side);
    close(side.fd);
    side.fd = -1;
    return;
  }
  std::istringstream in(frame);
  std::string word;
  int32_t who = -1;
  in >> word >> who;
  if (word == "bye" || word == "ended") {
    side.closing = true;
  } else if (word == "failed") {
    // The job ends with rank `who`'s message; every close from now on is
    // that ending.
    for (Side &each : sides)
      each.closing = true;
    tell(frame, &side);
  } else if (word == "lost") {
    lost(who, &side);
  }
}

void LossWatch::lost(int32_t lostRank, const Side *from) {
  // On first, then print: the ring learns at network speed, before the
  // launcher's SIGTERM reaches the far ranks.
  tell("lost " + std::to_string(lostRank), from);
  std::fprintf(stderr,
               "zero: error: rank %d: rank %d was lost: its process ended "
               "without finishing (killed, or it crashed outside zero's "
               "runtime); this rank ends too\n",
               rank, lostRank);
  std::fflush(stderr);
  std::_Exit(1);
}

void LossWatch::terminated() {
  tell("ended");
  std::fprintf(stderr,
               "zero: error: rank %d: ended by SIGTERM (the launcher ends the "
               "job: another of its processes ended, or it was cancelled)\n",
               rank);
  std::fflush(stderr);
  std::_Exit(128 + SIGTERM);
}
