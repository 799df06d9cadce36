// Controller: the worker loop's handling of each outcome, one key per worker, drain on shutdown.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/controller.h"
#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

// The reconciles a test's reconciler saw; tests wait on them with a real-time bound (the only
// real-time waits here: workers run on their own threads).
class Reconciles {
 public:
  void add(const std::string& key) {
    std::lock_guard lock(mutex_);
    ++count_[key];
    changed_.notify_all();
  }
  int count(const std::string& key) {
    std::lock_guard lock(mutex_);
    return count_[key];
  }
  bool awaitCount(const std::string& key, int n, std::chrono::milliseconds real_timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, real_timeout, [&] { return count_[key] >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, int> count_;
};

// A gate a reconcile waits at until the test opens it (bounded, so a failing test ends).
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool pass(std::chrono::milliseconds real_timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, real_timeout, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

TEST(ControllerLoopTest, SuccessForgetsTheKeysBackoff) {
  ManualClock clock;
  Reconciles seen;
  std::atomic<bool> fail{true};
  Controller controller(clock, [&](const std::string& key) {
    seen.add(key);
    return fail.exchange(false) ? ReconcileOutcome::failure("boom") : ReconcileOutcome::success();
  });
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  // The failure left the key waiting out its first backoff (5 ms).
  ASSERT_TRUE(clock.awaitNextDeadline(5s));
  EXPECT_EQ(controller.queue().numRequeues("ns/a"), 1);
  clock.advanceToNextDeadline();
  ASSERT_TRUE(seen.awaitCount("ns/a", 2));
  ASSERT_TRUE(controller.shutDown(5s));
  EXPECT_EQ(controller.queue().numRequeues("ns/a"), 0);
  EXPECT_EQ(seen.count("ns/a"), 2);
}

TEST(ControllerLoopTest, AnErrorIsRetriedWithTheKeysGrowingBackoff) {
  ManualClock clock;
  Reconciles seen;
  std::vector<std::string> errors;
  Controller controller(
      clock,
      [&](const std::string& key) {
        seen.add(key);
        return ReconcileOutcome::failure("apiserver unavailable");
      },
      {.rate_limiter = std::make_unique<ItemExponentialRateLimiter>(1s, 1000s),
       .on_reconciled = [&](const std::string&, const ReconcileOutcome& outcome,
                            std::chrono::nanoseconds) { errors.push_back(outcome.error); }});
  controller.start();
  controller.enqueue("ns/a");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_TRUE(seen.awaitCount("ns/a", attempt));
    auto due = clock.awaitNextDeadline(5s);
    ASSERT_TRUE(due);
    // 1 s, 2 s, 4 s: the per-key exponential backoff.
    EXPECT_EQ(*due - clock.monotonicNow(), std::chrono::seconds(1 << (attempt - 1)));
    EXPECT_EQ(seen.count("ns/a"), attempt);  // not before the backoff ends
    clock.advanceToNextDeadline();
  }
  ASSERT_TRUE(seen.awaitCount("ns/a", 4));
  ASSERT_TRUE(controller.shutDown(5s));
  ASSERT_GE(errors.size(), 3u);
  EXPECT_EQ(errors[0], "apiserver unavailable");
}

TEST(ControllerLoopTest, RequeueWithoutErrorIsRateLimitedToo) {
  ManualClock clock;
  Reconciles seen;
  Controller controller(clock,
                        [&](const std::string& key) {
                          seen.add(key);
                          return ReconcileOutcome{.result = ReconcileResult::Requeue};
                        },
                        {.rate_limiter = std::make_unique<ItemExponentialRateLimiter>(3s, 1000s)});
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  auto due = clock.awaitNextDeadline(5s);
  ASSERT_TRUE(due);
  EXPECT_EQ(*due - clock.monotonicNow(), 3s);
  EXPECT_EQ(controller.queue().numRequeues("ns/a"), 1);
  ASSERT_TRUE(controller.shutDown(5s));
}

TEST(ControllerLoopTest, RequeueAfterBringsTheKeyBackThenAndNotBefore) {
  ManualClock clock;
  Reconciles seen;
  Controller controller(clock, [&](const std::string& key) {
    seen.add(key);
    return ReconcileOutcome::requeueAfter(30s);
  });
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  auto due = clock.awaitNextDeadline(5s);
  ASSERT_TRUE(due);
  EXPECT_EQ(*due - clock.monotonicNow(), 30s);
  EXPECT_EQ(controller.queue().numRequeues("ns/a"), 0);  // a success, not a retry
  clock.advance(29s);
  EXPECT_EQ(controller.queue().len(), 0u);
  EXPECT_EQ(seen.count("ns/a"), 1);
  clock.advance(1s);
  ASSERT_TRUE(seen.awaitCount("ns/a", 2));
  ASSERT_TRUE(controller.shutDown(5s));
}

TEST(ControllerLoopTest, OneKeyIsNeverReconciledByTwoWorkersAtOnce) {
  ManualClock clock;
  Reconciles seen;
  Gate gate;
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  Controller controller(clock,
                        [&](const std::string& key) {
                          const int now = ++in_flight;
                          int most = most_in_flight.load();
                          while (now > most && !most_in_flight.compare_exchange_weak(most, now)) {
                          }
                          seen.add(key);
                          gate.pass();
                          --in_flight;
                          return ReconcileOutcome::success();
                        },
                        {.workers = 4});
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  // Queued again while it is being reconciled: held back until that reconcile is done.
  controller.enqueue("ns/a");
  controller.enqueue("ns/a");
  controller.enqueue("ns/b");
  ASSERT_TRUE(seen.awaitCount("ns/b", 1));  // other workers are free: other keys go on
  EXPECT_EQ(seen.count("ns/a"), 1);
  gate.open();
  ASSERT_TRUE(seen.awaitCount("ns/a", 2));  // the adds while in flight: one more reconcile
  ASSERT_TRUE(controller.shutDown(5s));
  EXPECT_EQ(seen.count("ns/a"), 2);
  EXPECT_EQ(most_in_flight.load(), 2);  // ns/a and ns/b, never ns/a twice
}

TEST(ControllerLoopTest, ShutDownLetsTheReconcileInFlightFinish) {
  ManualClock clock;
  Reconciles seen;
  Gate gate;
  std::atomic<bool> finished{false};
  Controller controller(clock, [&](const std::string& key) {
    seen.add(key);
    gate.pass();
    finished = true;
    return ReconcileOutcome::success();
  });
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  controller.enqueue("ns/b");  // queued, not started: dropped by the shutdown
  bool drained = false;
  std::thread stopper([&] { drained = controller.shutDown(60s); });
  ASSERT_TRUE(clock.awaitNextDeadline(5s));  // the drain waits on the Clock
  EXPECT_TRUE(controller.shuttingDown());
  gate.open();
  stopper.join();
  EXPECT_TRUE(drained);
  EXPECT_TRUE(finished);
  EXPECT_EQ(seen.count("ns/b"), 0);
}

TEST(ControllerLoopTest, DrainGivesUpAtItsDeadline) {
  ManualClock clock;
  Reconciles seen;
  Gate gate;
  Controller controller(clock, [&](const std::string& key) {
    seen.add(key);
    gate.pass();
    return ReconcileOutcome::success();
  });
  controller.start();
  controller.enqueue("ns/a");
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  bool drained = true;
  std::thread drainer([&] { drained = controller.drain(10s); });
  auto due = clock.awaitNextDeadline(5s);
  ASSERT_TRUE(due);
  EXPECT_EQ(*due - clock.monotonicNow(), 10s);
  clock.advance(10s);
  drainer.join();  // the reconcile is still at the gate
  EXPECT_FALSE(drained);
  gate.open();
  controller.shutDown(0s);  // joins the worker
}

TEST(ControllerLoopTest, WorkersWaitUntilReadyAndTheQueueCollectsKeysMeanwhile) {
  ManualClock clock;
  Reconciles seen;
  std::atomic<bool> ready{false};
  std::atomic<int> not_ready_reports{0};
  std::mutex ready_mutex;
  std::condition_variable ready_cv;
  Controller controller(clock,
                        [&](const std::string& key) {
                          seen.add(key);
                          return ReconcileOutcome::success();
                        },
                        {.workers = 2,
                         .wait_ready =
                             [&](std::chrono::nanoseconds step) {
                               std::unique_lock lock(ready_mutex);
                               return clock.waitUntil(lock, ready_cv, clock.deadlineAfter(step),
                                                      [&] { return ready.load(); });
                             },
                         .ready_step = 1s,
                         .on_not_ready = [&] { ++not_ready_reports; }});
  controller.start();
  controller.enqueue("ns/a");
  controller.enqueue("ns/a");
  ASSERT_TRUE(clock.awaitWaiters(2, 5s));
  clock.advance(1s);  // one step ends unready: reported once, however many workers wait
  ASSERT_TRUE(clock.awaitWaiters(2, 5s));
  EXPECT_EQ(seen.count("ns/a"), 0);
  EXPECT_EQ(not_ready_reports.load(), 1);
  {
    std::lock_guard lock(ready_mutex);
    ready = true;
  }
  ready_cv.notify_all();
  ASSERT_TRUE(seen.awaitCount("ns/a", 1));
  ASSERT_TRUE(controller.shutDown(5s));
  EXPECT_EQ(seen.count("ns/a"), 1);  // the two adds were one entry
}

TEST(ControllerLoopTest, ShutDownEndsWorkersStillWaitingToBeReady) {
  ManualClock clock;
  std::mutex ready_mutex;
  std::condition_variable ready_cv;
  Controller controller(clock, [](const std::string&) { return ReconcileOutcome::success(); },
                        {.wait_ready = [&](std::chrono::nanoseconds step) {
                          std::unique_lock lock(ready_mutex);
                          return clock.waitUntil(lock, ready_cv, clock.deadlineAfter(step),
                                                 [] { return false; });
                        }});
  controller.start();
  ASSERT_TRUE(clock.awaitWaiters(1, 5s));
  bool drained = false;
  std::thread stopper([&] { drained = controller.shutDown(0s); });
  // The worker sees the shutdown when its step ends (moved on only once the shutdown is under
  // way, or the worker would just take another step).
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (!controller.shuttingDown() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(controller.shuttingDown());
  clock.advance(1s);
  stopper.join();
  EXPECT_TRUE(drained);
}

}  // namespace
}  // namespace shardscaler::k8s
