//===- RendezvousTest.cpp - torchrun-style rendezvous over TCP ------------===//
//
// Ranks are threads on 127.0.0.1 here; across nodes the protocol is the same.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Rendezvous.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <functional>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace zero::rt;

namespace {

/// A port nothing listens on now.
int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  socklen_t size = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr *>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

RendezvousOptions optionsFor(int32_t rank, int32_t world, int port,
                             double timeout = 10) {
  RendezvousOptions options;
  options.rank = rank;
  options.worldSize = world;
  options.port = port;
  options.timeoutSeconds = timeout;
  return options;
}

/// Runs `body(rank)` for ranks [0, world) on their own threads; rank 0
/// last, so that the others first try to reach a rank 0 that is not up.
void onRanks(int32_t world, const std::function<void(int32_t)> &body) {
  std::vector<std::thread> threads;
  for (int32_t r = world - 1; r >= 0; --r)
    threads.emplace_back(body, r);
  for (std::thread &t : threads)
    t.join();
}

TEST(Rendezvous, BroadcastsAndGathersInRankOrder) {
  int port = freePort();
  std::vector<std::string> blobs(4), errors(4);
  std::vector<std::vector<std::string>> gathered(4);
  onRanks(4, [&](int32_t rank) {
    std::string error;
    auto rendezvous = Rendezvous::connect(optionsFor(rank, 4, port), error);
    if (!rendezvous) {
      errors[rank] = error;
      return;
    }
    blobs[rank] = rank == 0 ? std::string("unique id\0bytes", 15) : "";
    errors[rank] = rendezvous->broadcast(blobs[rank]);
    if (errors[rank].empty())
      errors[rank] =
          rendezvous->allGather("from " + std::to_string(rank), gathered[rank]);
  });
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(blobs[r], std::string("unique id\0bytes", 15));
    EXPECT_EQ(gathered[r], (std::vector<std::string>{"from 0", "from 1",
                                                     "from 2", "from 3"}));
  }
}

TEST(Rendezvous, AWorldOfOneNeedsNoOne) {
  std::string error;
  auto rendezvous = Rendezvous::connect(optionsFor(0, 1, freePort()), error);
  ASSERT_TRUE(rendezvous) << error;
  std::string blob = "id";
  EXPECT_EQ(rendezvous->broadcast(blob), "");
  std::vector<std::string> all;
  EXPECT_EQ(rendezvous->allGather("x", all), "");
  EXPECT_EQ(all, std::vector<std::string>{"x"});
}

TEST(Rendezvous, ADisagreeingWorldSizeEndsEveryRankWithTheReason) {
  int port = freePort();
  std::vector<std::string> errors(2);
  onRanks(2, [&](int32_t rank) {
    RendezvousOptions options = optionsFor(rank, rank == 0 ? 2 : 3, port, 5);
    Rendezvous::connect(options, errors[rank]);
  });
  EXPECT_EQ(errors[0], "rank 1 says the world has 3 ranks; rank 0 has 2");
  EXPECT_EQ(errors[1], errors[0]);
}

TEST(Rendezvous, AMissingRankTimesOutWithItsNumber) {
  int port = freePort();
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int32_t rank : {1, 0}) // rank 2 never comes
    threads.emplace_back([&, rank] {
      Rendezvous::connect(optionsFor(rank, 3, port, 1), errors[rank]);
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(errors[0], "rank 0 waited 1 s on 127.0.0.1:" +
                           std::to_string(port) + " for rank 2");
  // Rank 1 joined in time; it ends with rank 0's reason, not a timeout.
  EXPECT_EQ(errors[1], errors[0]);
}

TEST(Rendezvous, NoRankZeroIsNamedWithTheAddress) {
  int port = freePort();
  std::string error;
  EXPECT_FALSE(Rendezvous::connect(optionsFor(2, 4, port, 0.3), error));
  EXPECT_EQ(error, "rank 2 could not reach rank 0 at 127.0.0.1:" +
                       std::to_string(port) +
                       " within 0.3 s: Connection refused");
}

TEST(Rendezvous, EnvironmentAsTorchrunSetsIt) {
  setenv("WORLD_SIZE", "8", 1);
  setenv("RANK", "5", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("MASTER_ADDR", "node0", 1);
  setenv("MASTER_PORT", "29400", 1);
  RendezvousOptions options;
  EXPECT_EQ(RendezvousOptions::fromEnvironment(options), "");
  EXPECT_EQ(options.worldSize, 8);
  EXPECT_EQ(options.rank, 5);
  EXPECT_EQ(options.localRank, 1);
  EXPECT_EQ(options.address, "node0");
  EXPECT_EQ(options.port, 29400);

  setenv("RANK", "8", 1);
  EXPECT_EQ(RendezvousOptions::fromEnvironment(options).rfind(
                "RANK is not an integer in [0, 7]", 0),
            0u);
  setenv("RANK", "5", 1);
  unsetenv("MASTER_PORT");
  EXPECT_EQ(RendezvousOptions::fromEnvironment(options).rfind(
                "MASTER_PORT is not a port number (torchrun sets", 0),
            0u);
  for (const char *name :
       {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"})
    unsetenv(name);
}

} // namespace
