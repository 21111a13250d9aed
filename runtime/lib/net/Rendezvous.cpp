//===- Rendezvous.cpp - ranks of a world find each other over TCP ---------===//
//
// Over Sockets.h's frames. A rank joins with the frame "ZRDV1 <rank> <world>";
// rank 0 answers "ok" or the reason it refuses, and each answer ends the join.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Rendezvous.h"
#include "net/Sockets.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

using namespace zero::rt;
using namespace zero::rt::net;

namespace {

/// `text` as an integer in [low, high]; false when it is not one.
bool parseInteger(const char *text, long low, long high, long &value) {
  if (!text || !*text)
    return false;
  char *end;
  errno = 0;
  value = std::strtol(text, &end, 10);
  return !*end && errno == 0 && value >= low && value <= high;
}

std::string joinRanks(const std::vector<int32_t> &ranks) {
  std::ostringstream os;
  for (size_t i = 0; i < ranks.size(); ++i)
    os << (i ? ", " : "") << ranks[i];
  return os.str();
}

} // namespace

std::string RendezvousOptions::fromEnvironment(RendezvousOptions &options) {
  const char *hint = " (torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, "
                     "MASTER_ADDR and MASTER_PORT)";
  long world, rank, local, port;
  if (!parseInteger(std::getenv("WORLD_SIZE"), 1, 1 << 20, world))
    return std::string("WORLD_SIZE is not a positive integer") + hint;
  if (!parseInteger(std::getenv("RANK"), 0, world - 1, rank))
    return "RANK is not an integer in [0, " + std::to_string(world - 1) + "]" +
           hint;
  const char *localText = std::getenv("LOCAL_RANK");
  if (!localText)
    local = rank;
  else if (!parseInteger(localText, 0, 1 << 20, local))
    return std::string("LOCAL_RANK is not a non-negative integer") + hint;
  const char *address = std::getenv("MASTER_ADDR");
  if (!address || !*address)
    return std::string("MASTER_ADDR is not set") + hint;
  if (!parseInteger(std::getenv("MASTER_PORT"), 1, 65535, port))
    return std::string("MASTER_PORT is not a port number") + hint;
  options.worldSize = static_cast<int32_t>(world);
  options.rank = static_cast<int32_t>(rank);
  options.localRank = static_cast<int32_t>(local);
  options.address = address;
  options.port = static_cast<int>(port);
  return "";
}

Rendezvous::Clock::time_point Rendezvous::startDeadline() const {
  return deadlineIn(options.timeoutSeconds);
}

std::string Rendezvous::waited() const {
  std::ostringstream os;
  os << options.timeoutSeconds << " s";
  return os.str();
}

std::string Rendezvous::where() const {
  return options.address + ":" + std::to_string(options.port);
}

std::unique_ptr<Rendezvous>
Rendezvous::connect(const RendezvousOptions &options, std::string &error) {
  std::unique_ptr<Rendezvous> rendezvous(new Rendezvous(options));
  rendezvous->peers.assign(options.worldSize, -1);
  error = options.rank == 0 ? rendezvous->serve() : rendezvous->join();
  if (!error.empty())
    return nullptr;
  return rendezvous;
}

Rendezvous::~Rendezvous() {
  for (int fd : peers)
    if (fd >= 0)
      close(fd);
  if (listener >= 0)
    close(listener);
}

void Rendezvous::tellJoined(const std::string &reason) {
  auto deadline = Clock::now() + std::chrono::seconds(1);
  for (int peer : peers)
    if (peer >= 0)
      (void)sendFrame(peer, reason, deadline);
}

std::string Rendezvous::serve() {
  auto deadline = startDeadline();
  std::string error;
  addrinfo *found = resolve(options.address, options.port, true, error);
  if (!found)
    return "rank 0: " + error;
  for (addrinfo *a = found; a && listener < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0)
      continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0)
      listener = fd;
    else {
      error = std::strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (listener < 0)
    return "rank 0 cannot listen on port " + std::to_string(options.port) +
           ": " + error;

  int32_t waiting = options.worldSize - 1;
  while (waiting > 0) {
    if (!waitFor(listener, POLLIN, deadline)) {
      std::vector<int32_t> missing;
      for (int32_t r = 1; r < options.worldSize; ++r)
        if (peers[r] < 0)
          missing.push_back(r);
      std::string reason = "rank 0 waited " + waited() + " on " + where() +
                           " for rank" + (missing.size() > 1 ? "s " : " ") +
                           joinRanks(missing);
      tellJoined(reason);
      return reason;
    }
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0)
      continue;
    setNoDelay(fd);
    std::string hello;
    if (!receiveFrame(fd, hello, deadline).empty()) {
      close(fd);
      continue;
    }
    std::istringstream in(hello);
    std::string magic;
    int32_t rank = -1, world = -1;
    in >> magic >> rank >> world;
    std::string refusal;
    if (magic != "ZRDV1")
      refusal = "not a zero rendezvous message";
    else if (world != options.worldSize)
      refusal = "rank " + std::to_string(rank) + " says the world has " +
                std::to_string(world) + " ranks; rank 0 has " +
                std::to_string(options.worldSize);
    else if (rank <= 0 || rank >= options.worldSize)
      refusal = "rank " + std::to_string(rank) + " is not in [1, " +
                std::to_string(options.worldSize - 1) + "]";
    else if (peers[rank] >= 0)
      refusal = "two processes say they are rank " + std::to_string(rank);
    (void)sendFrame(fd, refusal.empty() ? "ok" : refusal, deadline);
    if (!refusal.empty()) {
      close(fd);
      // A misconfigured world cannot run: rank 0 tells the others and ends.
      tellJoined(refusal);
      return refusal;
    }
    peers[rank] = fd;
    --waiting;
  }
  // Everyone is here: the joins end with "go".
  for (int32_t r = 1; r < options.worldSize; ++r)
    if (std::string e = sendFrame(peers[r], "go", deadline); !e.empty())
      return "rank 0 lost rank " + std::to_string(r) + ": " + e;
  return "";
}

std::string Rendezvous::join() {
  auto deadline = startDeadline();
  std::string me = "rank " + std::to_string(options.rank);
  std::string error;
  int fd = connectTo(options.address, options.port, deadline, error);
  if (fd < 0)
    return me + " could not reach rank 0 at " + where() + " within " +
           waited() + ": " + error;
  peers[0] = fd;
  std::ostringstream hello;
  hello << "ZRDV1 " << options.rank << " " << options.worldSize;
  if (std::string e = sendFrame(fd, hello.str(), deadline); !e.empty())
    return me + " lost rank 0 at " + where() + ": " + e;
  // Rank 0 may have started later and waits its full timeout for the
  // others before it answers with its verdict: give it that, and a little.
  auto answerDeadline = startDeadline() + std::chrono::seconds(2);
  for (const char *expected : {"ok", "go"}) {
    std::string answer;
    if (std::string e = receiveFrame(fd, answer, answerDeadline); !e.empty())
      return me + " waited for rank 0 at " + where() + " (the others): " + e;
    if (answer != expected)
      return answer; // rank 0's reason
  }
  return "";
}

std::string Rendezvous::broadcast(std::string &blob) {
  auto deadline = startDeadline();
  if (options.rank != 0) {
    if (std::string e = receiveFrame(peers[0], blob, deadline); !e.empty())
      return "rank " + std::to_string(options.rank) +
             " waited for rank 0's broadcast: " + e;
    return "";
  }
  for (int32_t r = 1; r < options.worldSize; ++r)
    if (std::string e = sendFrame(peers[r], blob, deadline); !e.empty())
      return "rank 0 broadcasting to rank " + std::to_string(r) + ": " + e;
  return "";
}

std::string Rendezvous::allGather(const std::string &mine,
                                  std::vector<std::string> &all) {
  auto deadline = startDeadline();
  all.assign(options.worldSize, "");
  if (options.rank != 0) {
    std::string me = "rank " + std::to_string(options.rank);
    if (std::string e = sendFrame(peers[0], mine, deadline); !e.empty())
      return me + " sending to rank 0: " + e;
    for (std::string &value : all)
      if (std::string e = receiveFrame(peers[0], value, deadline); !e.empty())
        return me + " waited for rank 0's gather: " + e;
    return "";
  }
  all[0] = mine;
  for (int32_t r = 1; r < options.worldSize; ++r)
    if (std::string e = receiveFrame(peers[r], all[r], deadline); !e.empty())
      return "rank 0 waited for rank " + std::to_string(r) + ": " + e;
  for (int32_t r = 1; r < options.worldSize; ++r)
    for (const std::string &value : all)
      if (std::string e = sendFrame(peers[r], value, deadline); !e.empty())
        return "rank 0 sending to rank " + std::to_string(r) + ": " + e;
  return "";
}
