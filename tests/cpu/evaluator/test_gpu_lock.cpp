// The GPU lock of workers sharing a GPU: shared holds overlap, an exclusive hold overlaps nothing,
// and a waiting exclusive request is not starved by a stream of shared ones.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fs.h"
#include "evaluator/gpu_lock.h"

using namespace ptxbench;

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
struct Interval {
  double from, to;
  bool exclusive;
};
}  // namespace

TEST(GpuLock, SharedHoldsOverlapExclusiveHoldsOverlapNothingAndAreNotStarved) {
  TempDir dir;
  GpuLock lock((dir.path() / "gpu0.lock").string());
  std::mutex m;
  std::vector<Interval> holds;
  std::atomic<bool> writer_done{false};
  auto record = [&](double from, bool exclusive) {
    std::lock_guard<std::mutex> g(m);
    holds.push_back({from, now_s(), exclusive});
  };
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r)
    readers.emplace_back([&] {  // flock treats each open() separately: threads stand in for processes
      while (!writer_done) {
        auto h = lock.acquire(GpuLock::Mode::shared);
        double t = now_s();
        std::this_thread::sleep_for(std::chrono::milliseconds(15));
        record(t, false);
      }
    });
  double writer_start = now_s();
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto h = lock.acquire(GpuLock::Mode::exclusive);
    double t = now_s();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    record(t, true);
  }
  double writer_s = now_s() - writer_start;
  writer_done = true;
  for (auto& t : readers) t.join();
  EXPECT_LT(writer_s, 5.0) << "the exclusive requests waited behind the shared ones for too long";
  int shared_overlaps = 0, exclusive = 0;
  for (std::size_t i = 0; i < holds.size(); ++i) {
    exclusive += holds[i].exclusive;
    for (std::size_t j = i + 1; j < holds.size(); ++j) {
      bool overlap = holds[i].from < holds[j].to && holds[j].from < holds[i].to;
      if (overlap && (holds[i].exclusive || holds[j].exclusive)) ADD_FAILURE() << "an exclusive hold overlapped another hold";
      if (overlap && !holds[i].exclusive && !holds[j].exclusive) ++shared_overlaps;
    }
  }
  EXPECT_EQ(exclusive, 5);
  EXPECT_GT(shared_overlaps, 0);
}

TEST(GpuLock, NoPathMeansNoLocking) {
  GpuLock none("");
  EXPECT_FALSE(none.enabled());
  auto a = none.acquire(GpuLock::Mode::exclusive);
  auto b = none.acquire(GpuLock::Mode::exclusive);  // would deadlock if it locked anything
  EXPECT_FALSE(a.held());
  EXPECT_FALSE(b.held());
}

TEST(GpuLock, AHoldIsReleasedWithItsOwner) {
  TempDir dir;
  GpuLock lock((dir.path() / "gpu0.lock").string());
  { auto h = lock.acquire(GpuLock::Mode::exclusive); EXPECT_TRUE(h.held()); }
  auto again = lock.acquire(GpuLock::Mode::exclusive);  // would block forever if not released
  EXPECT_TRUE(again.held());
}

TEST(GpuLock, UnwritableFolderIsAClearError) {
  GpuLock lock("/proc/no-such-folder/gpu0.lock");
  EXPECT_THROW((void)lock.acquire(GpuLock::Mode::shared), std::exception);
}
