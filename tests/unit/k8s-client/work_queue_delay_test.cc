// WorkQueue delayed adds: due order, waking on the Clock, earlier-wins dedup, rate limiting.
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"
#include "shardscaler/k8s_client/work_queue.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueueDelayTest, DelayedKeysBecomeReadyInDueOrder) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("c", 3s);
  queue.addAfter("a", 1s);
  queue.addAfter("b", 2s);
  EXPECT_EQ(queue.len(), 0u);
  EXPECT_EQ(queue.waitingLen(), 3u);
  clock.advance(1s);
  EXPECT_EQ(queue.len(), 1u);
  EXPECT_EQ(queue.get(), "a");
  clock.advance(2s);
  EXPECT_EQ(queue.len(), 2u);
  EXPECT_EQ(queue.get(), "b");
  EXPECT_EQ(queue.get(), "c");
  EXPECT_EQ(queue.waitingLen(), 0u);
}

TEST(WorkQueueDelayTest, KeysDueAtTheSameTimeKeepTheirAddOrder) {
  ManualClock clock;
  WorkQueue queue(clock);
  for (const char* key : {"x", "y", "z"}) queue.addAfter(key, 1s);
  clock.advance(1s);
  EXPECT_EQ(queue.get(), "x");
  EXPECT_EQ(queue.get(), "y");
  EXPECT_EQ(queue.get(), "z");
}

TEST(WorkQueueDelayTest, ABlockedWorkerWakesWhenTheClockReachesTheDueTime) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 5s);
  std::optional<std::string> got;
  std::thread worker([&] { got = queue.get(); });
  auto deadline = clock.awaitNextDeadline(5s);
  ASSERT_TRUE(deadline);
  EXPECT_EQ(*deadline - clock.monotonicNow(), 5s);
  clock.advance(5s);
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueDelayTest, AnEarlierDelayedAddShortensASleepingWorkersWait) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("late", 10s);
  std::optional<std::string> got;
  std::thread worker([&] { got = queue.get(); });
  ASSERT_TRUE(clock.awaitNextDeadline(5s));
  auto start = clock.monotonicNow();
  queue.addAfter("soon", 1s);
  // The worker re-arms its wait for the sooner key.
  ASSERT_TRUE(test_kit::eventually(5s, [&] {
    auto next = clock.awaitNextDeadline(1s);
    return next && *next == start + 1s;
  }));
  clock.advance(1s);
  worker.join();
  EXPECT_EQ(got, "soon");
}

TEST(WorkQueueDelayTest, AddingAWaitingKeyAgainKeepsTheEarlierTime) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 5s);
  queue.addAfter("a", 2s);
  queue.addAfter("a", 10s);
  EXPECT_EQ(queue.waitingLen(), 1u);
  clock.advance(2s);
  EXPECT_EQ(queue.get(), "a");
  queue.done("a");
  clock.advance(10s);
  EXPECT_EQ(queue.len(), 0u) << "the superseded 5 s and 10 s entries must not fire";
}

TEST(WorkQueueDelayTest, ZeroDelayIsAPlainAdd) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 0s);
  EXPECT_EQ(queue.len(), 1u);
  EXPECT_EQ(queue.waitingLen(), 0u);
}

TEST(WorkQueueDelayTest, RateLimitedAddsBackOffPerKeyUntilForgotten) {
  ManualClock clock;
  WorkQueue queue(clock, std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s));
  auto fail_once = [&](std::chrono::nanoseconds expected_delay) {
    queue.addRateLimited("a");
    clock.advance(expected_delay - 1ns);
    EXPECT_EQ(queue.len(), 0u) << "ready before " << expected_delay.count() << "ns";
    clock.advance(1ns);
    EXPECT_EQ(queue.get(), "a");
    queue.done("a");
  };
  fail_once(5ms);
  fail_once(10ms);
  fail_once(20ms);
  EXPECT_EQ(queue.numRequeues("a"), 3);
  queue.forget("a");
  EXPECT_EQ(queue.numRequeues("a"), 0);
  fail_once(5ms);
}

}  // namespace
}  // namespace shardscaler::k8s
