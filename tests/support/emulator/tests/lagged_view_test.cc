// Unit tests of the emulator's delay line (LaggedView) on a ManualClock: an event becomes visible
// exactly `lag` after it arrived, in order, with the old object the view held; the first list is
// complete before hasSynced(); late handlers get a replay; lag 0 is the informer itself; a full
// view holds the informer back instead of dropping; stop() releases everything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lagged_view.h"
#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::emulator {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr auto kRealTimeout = 5s;  // bounds every wait for the timer thread

k8s::ObjectPtr statefulSet(const std::string& name, const std::string& resource_version) {
  return std::make_shared<const k8s::Json>(k8s::Json{
      {"metadata", {{"name", name}, {"namespace", "mon"}, {"resourceVersion", resource_version}}}});
}

std::string describe(const char* what, const k8s::ObjectPtr& object) {
  return std::string(what) + " " + (*object)["metadata"]["name"].get<std::string>() + "@" +
         (*object)["metadata"]["resourceVersion"].get<std::string>();
}

// The handlers a controller registers on the view: what they saw, in order.
class SeenEvents {
 public:
  k8s::EventHandlers handlers() {
    return k8s::EventHandlers{
        .on_add = [this](const k8s::ObjectPtr& o) { push(describe("add", o)); },
        .on_update =
            [this](const k8s::ObjectPtr& a, const k8s::ObjectPtr& b) {
              push(describe("update", a) + " -> " +
                   b->at("metadata").at("resourceVersion").get<std::string>());
            },
        .on_delete = [this](const k8s::ObjectPtr& o) { push(describe("delete", o)); },
    };
  }
  // Waits (bounded, in real time) until `count` events were seen; returns them.
  std::vector<std::string> waitFor(std::size_t count) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, kRealTimeout, [&] { return seen_.size() >= count; });
    return seen_;
  }
  std::vector<std::string> now() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  void push(std::string event) {
    {
      std::lock_guard lock(mutex_);
      seen_.push_back(std::move(event));
    }
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> seen_;
};

class LaggedViewTest : public ::testing::Test {
 protected:
  // Once the timer thread waits for its next due time, moves the clock there; returns it.
  std::optional<k8s::Clock::MonotonicTime> advanceToTimer() {
    auto next = clock_.awaitNextDeadline(kRealTimeout);
    if (next) clock_.advance(*next - clock_.monotonicNow());
    return next;
  }

  k8s::ManualClock clock_;
  std::atomic<bool> source_synced_{false};
  SeenEvents seen_;
};

TEST_F(LaggedViewTest, AnEventIsVisibleExactlyTheLagAfterItArrived) {
  LaggedView view(1000ms, clock_, [this] { return source_synced_.load(); });
  view.addEventHandlers(seen_.handlers());
  view.start();
  auto source = view.sourceHandlers();
  const auto arrived = clock_.monotonicNow();
  source.on_add(statefulSet("prometheus-main", "1"));

  // The timer waits for exactly arrival + lag.
  EXPECT_EQ(clock_.awaitNextDeadline(kRealTimeout), arrived + 1000ms);
  clock_.advance(999ms);
  EXPECT_EQ(clock_.awaitNextDeadline(kRealTimeout), arrived + 1000ms);
  EXPECT_EQ(view.store().get("mon", "prometheus-main"), nullptr);
  EXPECT_THAT(seen_.now(), IsEmpty());

  clock_.advance(1ms);
  EXPECT_THAT(seen_.waitFor(1), ElementsAre("add prometheus-main@1"));
  ASSERT_NE(view.store().get("mon", "prometheus-main"), nullptr);
  EXPECT_EQ(view.applied(), 1U);
}

TEST_F(LaggedViewTest, EventsKeepTheirOrderAndSpacingAndUpdatesCarryTheViewsOldObject) {
  LaggedView view(500ms, clock_, [this] { return source_synced_.load(); });
  view.addEventHandlers(seen_.handlers());
  view.start();
  auto source = view.sourceHandlers();
  const auto t0 = clock_.monotonicNow();
  source.on_add(statefulSet("a", "1"));
  clock_.advance(100ms);
  // The informer's old object is ignored: the view's own is handed on.
  source.on_update(statefulSet("ignored", "0"), statefulSet("a", "2"));
  clock_.advance(100ms);
  // Stops matching the informer's selector (relabelled): the informer tells a delete.
  source.on_delete(statefulSet("a", "3"));
  source.on_add(statefulSet("b", "4"));

  EXPECT_EQ(advanceToTimer(), t0 + 500ms);
  EXPECT_THAT(seen_.waitFor(1), ElementsAre("add a@1"));
  EXPECT_EQ(advanceToTimer(), t0 + 600ms);
  EXPECT_THAT(seen_.waitFor(2), ElementsAre("add a@1", "update a@1 -> 2"));
  EXPECT_EQ((*view.store().get("mon", "a"))["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(advanceToTimer(), t0 + 700ms);
  EXPECT_THAT(seen_.waitFor(4), ElementsAre("add a@1", "update a@1 -> 2", "delete a@3", "add b@4"));
  EXPECT_EQ(view.store().get("mon", "a"), nullptr);
  EXPECT_EQ(view.store().size(), 1U);
}

TEST_F(LaggedViewTest, SyncedOnlyOnceTheFirstListIsVisible) {
  LaggedView view(2000ms, clock_, [this] { return source_synced_.load(); });
  view.start();
  auto source = view.sourceHandlers();
  source.on_add(statefulSet("a", "1"));
  source.on_add(statefulSet("b", "2"));
  EXPECT_FALSE(view.hasSynced());  // the informer itself has not listed yet
  source_synced_ = true;
  EXPECT_FALSE(view.hasSynced());  // listed, but the view still trails
  clock_.advance(2000ms);
  for (auto deadline = std::chrono::steady_clock::now() + kRealTimeout;
       !view.hasSynced() && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(view.hasSynced());
  EXPECT_EQ(view.store().size(), 2U);
  // A later event in flight does not make it unsynced again.
  source.on_add(statefulSet("c", "3"));
  EXPECT_TRUE(view.hasSynced());
}

TEST_F(LaggedViewTest, LateHandlersGetWhatTheViewShowsThenTheLaggedStream) {
  LaggedView view(300ms, clock_, [this] { return source_synced_.load(); });
  view.start();
  auto source = view.sourceHandlers();
  source.on_add(statefulSet("a", "1"));
  clock_.advance(300ms);
  for (auto deadline = std::chrono::steady_clock::now() + kRealTimeout;
       view.applied() < 1 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::yield();
  }
  source.on_add(statefulSet("b", "2"));  // still in flight when the handlers are added
  view.addEventHandlers(seen_.handlers());
  EXPECT_THAT(seen_.now(), ElementsAre("add a@1"));
  clock_.advance(300ms);
  EXPECT_THAT(seen_.waitFor(2), ElementsAre("add a@1", "add b@2"));
}

TEST_F(LaggedViewTest, LagZeroIsTheInformerItselfWithNoThread) {
  LaggedView view(0ms, clock_, [this] { return source_synced_.load(); });
  view.addEventHandlers(seen_.handlers());
  view.start();
  auto source = view.sourceHandlers();
  source.on_add(statefulSet("a", "1"));
  // Visible on return, on the caller's thread, with no time passing.
  EXPECT_THAT(seen_.now(), ElementsAre("add a@1"));
  ASSERT_NE(view.store().get("mon", "a"), nullptr);
  EXPECT_EQ(clock_.waiterCount(), 0U);
  source_synced_ = true;
  EXPECT_TRUE(view.hasSynced());
}

TEST_F(LaggedViewTest, AFullViewHoldsTheInformerBackAndDropsNothing) {
  LaggedView view(
      100ms, clock_, [this] { return source_synced_.load(); }, /*capacity=*/2);
  view.addEventHandlers(seen_.handlers());
  view.start();
  auto source = view.sourceHandlers();
  source.on_add(statefulSet("a", "1"));
  source.on_add(statefulSet("b", "2"));
  std::atomic<bool> third_returned{false};
  std::thread informer([&] {
    source.on_add(statefulSet("c", "3"));
    third_returned = true;
  });
  // The informer thread and the timer both wait now; only time moving frees room.
  ASSERT_TRUE(clock_.awaitWaiters(2, kRealTimeout));
  EXPECT_FALSE(third_returned);
  EXPECT_EQ(view.received(), 2U);
  clock_.advance(100ms);  // a and b are applied, which makes room for c
  EXPECT_THAT(seen_.waitFor(2), ElementsAre("add a@1", "add b@2"));
  informer.join();
  EXPECT_EQ(view.received(), 3U);
  clock_.advance(100ms);
  EXPECT_THAT(seen_.waitFor(3), ElementsAre("add a@1", "add b@2", "add c@3"));
}

TEST_F(LaggedViewTest, StopReleasesAWaitingInformerAndTheTimer) {
  LaggedView view(
      100ms, clock_, [this] { return source_synced_.load(); }, /*capacity=*/1);
  view.start();
  auto source = view.sourceHandlers();
  source.on_add(statefulSet("a", "1"));
  std::thread informer([&] { source.on_add(statefulSet("b", "2")); });
  ASSERT_TRUE(clock_.awaitWaiters(2, kRealTimeout));
  view.stop();  // no time passes: both must return because of stop alone
  informer.join();
  EXPECT_EQ(view.applied(), 0U);
  EXPECT_EQ(view.store().size(), 0U);
  view.stop();  // idempotent
}

}  // namespace
}  // namespace shardscaler::emulator
