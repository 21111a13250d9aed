//===- TimelineTest.cpp - the stand-in driver's model of time -------------===//
//
// The stand-in CUDA driver (test/FakeCuda) models when work on a stream
// ends: a copy across the link takes its bytes over ZERO_FAKE_CUDA_LINK_GBPS
// on its stream, a kernel ZERO_FAKE_CUDA_KERNEL_US, and events, waits and
// synchronizations follow. The offload benchmarks read step times from this
// model, so its times are checked here where they are exact: between two
// events recorded on a stream that is busy past both records.
//
//===----------------------------------------------------------------------===//

#include "backends/CudaDriver.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

using namespace zero::rt::cuda;

namespace {

// 10 MB/s: a copy of 1 MB keeps its stream busy for 100 ms, far longer
// than the calls after it take; 10 KB take 1 ms.
constexpr const char *kLinkGbps = "0.01";
constexpr size_t kBusyBytes = 1'000'000;
constexpr size_t kTimedBytes = 10'000;
constexpr float kTimedMs = 1.0f;
constexpr const char *kKernelUs = "500";
constexpr float kKernelMs = 0.5f;

class TimelineTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // Read once, at the driver's first use of each.
    setenv("ZERO_FAKE_CUDA_LINK_GBPS", kLinkGbps, 1);
    setenv("ZERO_FAKE_CUDA_KERNEL_US", kKernelUs, 1);
    // Waits spin where a driver's would (SpinningWaitHoldsACore).
    setenv("ZERO_FAKE_CUDA_SPIN", "1", 1);
    void *library = dlopen(ZERO_FAKE_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
    bool bound =
        bindSymbol(library, "cuMemAlloc_v2", d.cuMemAlloc) &&
        bindSymbol(library, "cuMemFree_v2", d.cuMemFree) &&
        bindSymbol(library, "cuMemcpyAsync", d.cuMemcpyAsync) &&
        bindSymbol(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
        bindSymbol(library, "cuLaunchKernel", d.cuLaunchKernel) &&
        bindSymbol(library, "cuStreamCreate", d.cuStreamCreate) &&
        bindSymbol(library, "cuStreamSynchronize", d.cuStreamSynchronize) &&
        bindSymbol(library, "cuStreamWaitEvent", d.cuStreamWaitEvent) &&
        bindSymbol(library, "cuEventCreate", d.cuEventCreate) &&
        bindSymbol(library, "cuEventRecord", d.cuEventRecord) &&
        bindSymbol(library, "cuEventQuery", d.cuEventQuery) &&
        bindSymbol(library, "cuEventSynchronize", d.cuEventSynchronize) &&
        bindSymbol(library, "cuEventElapsedTime_v2", d.cuEventElapsedTime) &&
        bindSymbol(library, "cuDevicePrimaryCtxSetFlags_v2",
                   d.cuDevicePrimaryCtxSetFlags);
    ASSERT_TRUE(bound) << dlerror();
  }

  void SetUp() override {
    ASSERT_EQ(d.cuMemAlloc(&device, kBusyBytes), CUDA_SUCCESS);
    ASSERT_EQ(d.cuMemAlloc(&otherDevice, kBusyBytes), CUDA_SUCCESS);
  }
  void TearDown() override {
    d.cuMemFree(device);
    d.cuMemFree(otherDevice);
  }

  CUstream newStream() {
    CUstream stream = nullptr;
    EXPECT_EQ(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    return stream;
  }
  CUevent recorded(CUstream stream) {
    CUevent event = nullptr;
    EXPECT_EQ(d.cuEventCreate(&event, 0), CUDA_SUCCESS);
    EXPECT_EQ(d.cuEventRecord(event, stream), CUDA_SUCCESS);
    return event;
  }
  /// Keeps `stream` busy for 100 ms with a copy down from device memory.
  void makeBusy(CUstream stream) {
    ASSERT_EQ(d.cuMemcpyAsync(host.data(), device, kBusyBytes, stream),
              CUDA_SUCCESS);
  }
  float elapsedMs(CUevent begin, CUevent end) {
    float ms = -1;
    EXPECT_EQ(d.cuEventElapsedTime(&ms, begin, end), CUDA_SUCCESS);
    return ms;
  }

  static Driver d;
  void *device = nullptr, *otherDevice = nullptr;
  std::vector<char> host = std::vector<char>(kBusyBytes);
};

Driver TimelineTest::d{};

TEST_F(TimelineTest, CopyAcrossTheLinkTakesItsBytesOverTheBandwidth) {
  CUstream stream = newStream();
  makeBusy(stream);
  CUevent begin = recorded(stream);
  ASSERT_EQ(d.cuMemcpyAsync(device, host.data(), kTimedBytes, stream),
            CUDA_SUCCESS);
  CUevent end = recorded(stream);
  EXPECT_NEAR(elapsedMs(begin, end), kTimedMs, 1e-3);
}

TEST_F(TimelineTest, CopyWithinDeviceMemoryTakesNoLinkTime) {
  CUstream stream = newStream();
  makeBusy(stream);
  CUevent begin = recorded(stream);
  ASSERT_EQ(d.cuMemcpyAsync(otherDevice, device, kBusyBytes, stream),
            CUDA_SUCCESS);
  CUevent end = recorded(stream);
  EXPECT_EQ(elapsedMs(begin, end), 0.0f);
}

TEST_F(TimelineTest, AsynchronousCopyMovesTheBytesAtOnce) {
  std::vector<char> sent(kTimedBytes, 'z'), back(kTimedBytes, 0);
  CUstream stream = newStream();
  ASSERT_EQ(d.cuMemcpyAsync(device, sent.data(), kTimedBytes, stream),
            CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyAsync(back.data(), device, kTimedBytes, stream),
            CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(sent.data(), back.data(), kTimedBytes), 0);
}

TEST_F(TimelineTest, EventIsDoneOnlyOnceTheWorkBeforeItIs) {
  CUstream stream = newStream();
  makeBusy(stream);
  CUevent event = recorded(stream);
  EXPECT_EQ(d.cuEventQuery(event), CUDA_ERROR_NOT_READY);
  ASSERT_EQ(d.cuEventSynchronize(event), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventQuery(event), CUDA_SUCCESS);
}

TEST_F(TimelineTest, StreamSynchronizationWaitsForItsWork) {
  CUstream stream = newStream();
  auto before = std::chrono::steady_clock::now();
  makeBusy(stream);
  CUevent event = recorded(stream);
  ASSERT_EQ(d.cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventQuery(event), CUDA_SUCCESS);
  EXPECT_GE(std::chrono::steady_clock::now() - before,
            std::chrono::milliseconds(100));
}

TEST_F(TimelineTest, KernelAfterAWaitStartsWhenTheEventIsDone) {
  CUstream copies = newStream(), kernels = newStream();
  auto before = std::chrono::steady_clock::now();
  makeBusy(copies);
  CUevent copied = recorded(copies);
  ASSERT_EQ(d.cuStreamWaitEvent(kernels, copied, 0), CUDA_SUCCESS);
  ASSERT_EQ(
      d.cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, kernels, nullptr, nullptr),
      CUDA_SUCCESS);
  // The launching thread waited for the kernel, which ran after the copy.
  EXPECT_GE(std::chrono::steady_clock::now() - before,
            std::chrono::microseconds(100'500));
  EXPECT_EQ(d.cuEventQuery(copied), CUDA_SUCCESS);
  EXPECT_GE(elapsedMs(copied, recorded(kernels)), kKernelMs);
}

TEST_F(TimelineTest, StreamsRunBesideEachOther) {
  CUstream first = newStream(), second = newStream();
  makeBusy(first);
  CUevent busy = recorded(first);
  CUevent idle = recorded(second);
  EXPECT_EQ(d.cuEventQuery(idle), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventQuery(busy), CUDA_ERROR_NOT_READY);
}

TEST_F(TimelineTest, SynchronousCopyWaitsForTheLink) {
  auto before = std::chrono::steady_clock::now();
  ASSERT_EQ(d.cuMemcpyHtoD(device, host.data(), kTimedBytes), CUDA_SUCCESS);
  EXPECT_GE(std::chrono::steady_clock::now() - before,
            std::chrono::milliseconds(1));
}

/// CPU time the calling thread has used, in ms.
double threadCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec * 1e-6;
}

// A driver's context spins while a thread waits (CUDA's auto, with no
// more contexts than cores), holding a core that the host's update may
// want; with blocking waits (the runtime's ZERO_CUDA_SYNC=blocking) the
// thread sleeps. A 100 ms synchronization, each way (bounds loose for a
// loaded machine).
TEST_F(TimelineTest, SpinningWaitHoldsACoreBlockingDoesNot) {
  CUstream stream = newStream();
  makeBusy(stream);
  double before = threadCpuMs();
  ASSERT_EQ(d.cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_GE(threadCpuMs() - before, 25.0);

  ASSERT_EQ(d.cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_BLOCKING_SYNC),
            CUDA_SUCCESS);
  makeBusy(stream);
  before = threadCpuMs();
  ASSERT_EQ(d.cuStreamSynchronize(stream), CUDA_SUCCESS);
  EXPECT_LE(threadCpuMs() - before, 10.0);
  EXPECT_EQ(d.cuDevicePrimaryCtxSetFlags(0, 3), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(d.cuDevicePrimaryCtxSetFlags(0, CU_CTX_SCHED_AUTO), CUDA_SUCCESS);
}

} // namespace
