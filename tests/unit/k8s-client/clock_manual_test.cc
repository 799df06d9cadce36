// ManualClock: waits wake when time moves, deadlines are visible to tests, no lost wakeups.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

TEST(ManualClockTest, AWaitEndsWhenTheClockReachesItsDeadline) {
  ManualClock clock;
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> woke{true};
  std::thread waiter([&] {
    std::unique_lock lock(mutex);
    woke = clock.waitUntil(lock, cv, clock.deadlineAfter(10s), [] { return false; });
  });
  auto deadline = clock.awaitNextDeadline(5s);
  ASSERT_TRUE(deadline);
  EXPECT_EQ(*deadline - clock.monotonicNow(), 10s);
  clock.advance(9s);
  EXPECT_EQ(clock.waiterCount(), 1u);
  clock.advance(1s);
  waiter.join();
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(clock.waiterCount(), 0u);
}

TEST(ManualClockTest, AWaitEndsWhenItsConditionHolds) {
  ManualClock clock;
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    std::unique_lock lock(mutex);
    woke = clock.waitUntil(lock, cv, Clock::MonotonicTime::max(), [&] { return ready; });
  });
  ASSERT_TRUE(clock.awaitWaiters(1, 5s));
  EXPECT_FALSE(clock.awaitNextDeadline(0ms)) << "no deadline to report";
  {
    std::lock_guard lock(mutex);
    ready = true;
  }
  cv.notify_all();
  waiter.join();
  EXPECT_TRUE(woke.load());
}

TEST(ManualClockTest, ManyShortWaitsRacingAdvanceNeverHang) {
  ManualClock clock;
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    for (int i = 0; i < 500; ++i) {
      std::unique_lock lock(mutex);
      clock.waitUntil(lock, cv, clock.deadlineAfter(1ms), [] { return false; });
    }
    done = true;
  });
  auto limit = std::chrono::steady_clock::now() + 20s;
  while (!done && std::chrono::steady_clock::now() < limit) clock.advance(1ms);
  waiter.join();
  EXPECT_TRUE(done.load());
}

TEST(ManualClockTest, AdvanceToNextDeadlineMovesExactlyThere) {
  ManualClock clock;
  EXPECT_FALSE(clock.advanceToNextDeadline());
  std::mutex mutex;
  std::condition_variable cv;
  auto start = clock.monotonicNow();
  auto wall = clock.now();
  std::thread waiter([&] {
    std::unique_lock lock(mutex);
    clock.waitUntil(lock, cv, clock.deadlineAfter(1500ms), [] { return false; });
  });
  ASSERT_TRUE(clock.awaitNextDeadline(5s));
  clock.advanceToNextDeadline();
  waiter.join();
  EXPECT_EQ(clock.monotonicNow() - start, 1500ms);
  EXPECT_EQ(clock.now() - wall, 1500ms);
}

TEST(ClockTest, DeadlineAfterSaturatesInsteadOfOverflowing) {
  RealClock clock;
  EXPECT_EQ(clock.deadlineAfter(std::chrono::nanoseconds::max()), Clock::MonotonicTime::max());
  ManualClock manual;
  EXPECT_EQ(manual.deadlineAfter(-5s), manual.monotonicNow());
}

}  // namespace
}  // namespace shardscaler::k8s
