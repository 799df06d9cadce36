// WorkQueue: dedup, FIFO, one key never in two workers, shutdown and drain, metrics hook.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"
#include "shardscaler/k8s_client/work_queue.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueueTest, DeduplicatesKeysNotYetHandedOutAndKeepsFifoOrder) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("b");
  queue.add("a");
  queue.add("b");
  queue.add("a");
  EXPECT_EQ(queue.len(), 2u);
  EXPECT_EQ(queue.get(), "b");
  EXPECT_EQ(queue.get(), "a");
  EXPECT_EQ(queue.len(), 0u);
}

TEST(WorkQueueTest, AKeyAddedWhileProcessingIsHeldBackUntilDone) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  ASSERT_EQ(queue.get(), "a");
  queue.add("a");
  queue.add("a");
  EXPECT_EQ(queue.len(), 0u) << "a second worker must not get a key being processed";
  queue.done("a");
  EXPECT_EQ(queue.len(), 1u);
  EXPECT_EQ(queue.get(), "a");
  queue.done("a");
  EXPECT_EQ(queue.len(), 0u);
}

TEST(WorkQueueTest, NoKeyIsEverProcessedByTwoWorkersAtOnce) {
  ManualClock clock;
  WorkQueue queue(clock);
  constexpr int kKeys = 5;
  std::mutex mutex;
  std::map<std::string, int> in_flight;
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};
  std::atomic<int> busy{0};
  std::vector<std::thread> workers;
  workers.reserve(4);
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue.get()) {
        ++busy;
        {
          std::lock_guard lock(mutex);
          if (++in_flight[*key] > 1) ++overlaps;
        }
        std::this_thread::yield();  // widen the window for a second worker
        {
          std::lock_guard lock(mutex);
          --in_flight[*key];
        }
        ++processed;
        queue.done(*key);
        --busy;
      }
    });
  }
  for (int i = 0; i < 20000; ++i) queue.add("key-" + std::to_string(i % kKeys));
  ASSERT_TRUE(test_kit::eventually(5s, [&] { return queue.len() == 0 && busy.load() == 0; }));
  queue.shutDown();
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LE(processed.load(), 20000);
}

TEST(WorkQueueTest, ShutDownWakesBlockedWorkersAndStopsHandingOutKeys) {
  ManualClock clock;
  WorkQueue queue(clock);
  std::optional<std::string> got = "unset";
  std::thread worker([&] { got = queue.get(); });
  ASSERT_TRUE(clock.awaitWaiters(1, 5s));
  queue.shutDown();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
  EXPECT_TRUE(queue.shuttingDown());

  WorkQueue queued(clock);
  queued.add("a");
  queued.addAfter("b", 1s);
  queued.shutDown();
  queued.add("c");
  EXPECT_EQ(queued.get(), std::nullopt);
  EXPECT_EQ(queued.len(), 0u);
  EXPECT_EQ(queued.waitingLen(), 0u);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForWorkInFlight) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  queue.add("b");
  ASSERT_EQ(queue.get(), "a");
  std::atomic<bool> drained{false};
  std::atomic<bool> returned{false};
  std::thread stopper([&] {
    drained = queue.shutDownWithDrain(30s);
    returned = true;
  });
  ASSERT_TRUE(clock.awaitNextDeadline(5s));
  EXPECT_FALSE(returned.load());
  EXPECT_EQ(queue.get(), std::nullopt) << "draining hands out nothing new";
  queue.done("a");
  stopper.join();
  EXPECT_TRUE(drained.load());
}

TEST(WorkQueueTest, ShutDownWithDrainGivesUpAtTheDeadline) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  ASSERT_EQ(queue.get(), "a");
  std::atomic<bool> drained{true};
  std::thread stopper([&] { drained = queue.shutDownWithDrain(30s); });
  ASSERT_TRUE(clock.awaitNextDeadline(5s));
  clock.advance(30s);
  stopper.join();
  EXPECT_FALSE(drained.load());
  queue.done("a");  // late done() after shutdown is harmless
}

class RecordingObserver final : public WorkQueueObserver {
 public:
  void onDepth(std::size_t depth) override { depths.push_back(depth); }
  void onAdd() override { ++adds; }
  void onQueueLatency(std::chrono::nanoseconds waited) override { latencies.push_back(waited); }
  void onWorkDuration(std::chrono::nanoseconds took) override { durations.push_back(took); }
  void onRetry() override { ++retries; }

  std::vector<std::size_t> depths;
  int adds = 0;
  std::vector<std::chrono::nanoseconds> latencies;
  std::vector<std::chrono::nanoseconds> durations;
  int retries = 0;
};

TEST(WorkQueueTest, ObserverSeesDepthAddsLatencyWorkDurationAndRetries) {
  ManualClock clock;
  RecordingObserver observer;
  WorkQueue queue(clock, std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s), &observer);
  queue.add("a");
  queue.add("a");  // no-op: not an add
  queue.add("b");
  clock.advance(3s);
  ASSERT_EQ(queue.get(), "a");
  clock.advance(2s);
  queue.done("a");
  queue.addRateLimited("a");
  EXPECT_EQ(observer.adds, 2);
  EXPECT_EQ(observer.depths, (std::vector<std::size_t>{1, 2, 1}));
  ASSERT_EQ(observer.latencies.size(), 1u);
  EXPECT_EQ(observer.latencies[0], 3s);
  ASSERT_EQ(observer.durations.size(), 1u);
  EXPECT_EQ(observer.durations[0], 2s);
  EXPECT_EQ(observer.retries, 1);
}

}  // namespace
}  // namespace shardscaler::k8s
