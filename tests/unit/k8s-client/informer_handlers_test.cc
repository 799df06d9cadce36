// Informer: handlers see adds/updates/deletes in order; a relist after 410 produces the
// right calls, deletes included; late handlers, resync, sync waits, stop.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "cache_test_support.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;
using cachetest::awaitOpenWatch;
using cachetest::EventLog;
using cachetest::makeObject;
using testing::FakeKubeClient;
using testing::Verb;

const Resource kConfigMaps{"", "v1", "configmaps", true};

EventHandlers recordInto(EventLog& log) {
  auto describe = [](const ObjectPtr& o) { return objectKey(*o) + "@" + resourceVersionOf(*o); };
  return EventHandlers{
      .on_add = [&log, describe](const ObjectPtr& o) { log.push("add " + describe(o)); },
      .on_update =
          [&log, describe](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            log.push("update " + describe(old_object) + "->" + resourceVersionOf(*new_object));
          },
      .on_delete = [&log, describe](const ObjectPtr& o) { log.push("delete " + describe(o)); },
  };
}

class InformerTest : public ::testing::Test {
 protected:
  void make(const InformerOptions& options = {}) {
    informer_ = std::make_unique<Informer>(server_, kConfigMaps, options, clock_);
  }
  void TearDown() override {
    if (informer_) informer_->stop();
  }

  // The resourceVersion after the test's n-th write.
  std::string rv(int n) const { return cachetest::resourceVersionAfter(base_rv_, n); }

  FakeKubeClient server_;
  const std::string base_rv_ = server_.currentResourceVersion();
  ManualClock clock_;
  EventLog log_;
  std::unique_ptr<Informer> informer_;
};

TEST_F(InformerTest, HandlersSeeEveryChangeInOrderWithTheStoreAlreadyUpdated) {
  server_.put(kConfigMaps, makeObject("ns", "a"));  // rv(1)
  make();
  auto* informer = informer_.get();
  bool store_was_current = true;
  EventHandlers handlers = recordInto(log_);
  auto record_add = handlers.on_add;
  handlers.on_add = [&, record_add](const ObjectPtr& o) {
    store_was_current = store_was_current && informer->store().get(objectKey(*o)) == o;
    record_add(o);
  };
  informer_->addEventHandlers(handlers);
  informer_->start();
  ASSERT_TRUE(test_kit::eventually(5s, [&] { return informer_->hasSynced(); }));
  EXPECT_TRUE(informer_->waitForSync(0s));
  ASSERT_TRUE(awaitOpenWatch(server_, 1));

  server_.put(kConfigMaps, makeObject("ns", "b"));                       // rv(2)
  server_.put(kConfigMaps, makeObject("ns", "a", nullptr, {{"v", 2}}));  // rv(3)
  server_.erase(kConfigMaps, "ns", "b");                                 // rv(4)
  ASSERT_TRUE(log_.awaitSize(4));
  EXPECT_EQ(log_.entries(), (std::vector<std::string>{"add ns/a@" + rv(1), "add ns/b@" + rv(2),
                                                      "update ns/a@" + rv(1) + "->" + rv(3),
                                                      "delete ns/b@" + rv(4)}));
  EXPECT_TRUE(store_was_current);
  EXPECT_EQ(informer_->store().size(), 1u);
  EXPECT_EQ(informer_->store().get("ns", "a")->at("spec").at("v"), 2);
  // The resume point moves only after handlers ran, so it may trail the log by a moment.
  EXPECT_TRUE(
      test_kit::eventually(5s, [&] { return informer_->lastSyncResourceVersion() == rv(4); }));
}

// A synced informer has its resourceVersion: the first list's is set before the informer counts
// as synced (its add handlers run just before that), so no reader sees a synced cache without one.
TEST_F(InformerTest, TheFirstListsVersionIsThereBeforeTheInformerIsSynced) {
  server_.put(kConfigMaps, makeObject("ns", "a"));  // rv(1)
  make();
  auto* informer = informer_.get();
  std::string version_at_add;
  informer_->addEventHandlers(EventHandlers{.on_add = [&, informer](const ObjectPtr&) {
    version_at_add = informer->lastSyncResourceVersion();
  }});
  informer_->start();
  ASSERT_TRUE(test_kit::eventually(5s, [&] { return informer_->hasSynced(); }));
  EXPECT_EQ(version_at_add, rv(1));
  EXPECT_EQ(informer_->lastSyncResourceVersion(), rv(1));
}

TEST_F(InformerTest, RelistAfterGoneAddsUpdatesAndDeletesWhatChangedWhileDisconnected) {
  server_.put(kConfigMaps, makeObject("ns", "a"));  // rv(1)
  server_.put(kConfigMaps, makeObject("ns", "b"));  // rv(2)
  server_.put(kConfigMaps, makeObject("ns", "d"));  // rv(3)
  make();
  informer_->addEventHandlers(recordInto(log_));
  informer_->start();
  ASSERT_TRUE(awaitOpenWatch(server_, 1));
  ASSERT_TRUE(log_.awaitSize(3));
  log_.clear();

  server_.endWatches(makeError(ErrorKind::Transport, "connection reset").error());
  ASSERT_TRUE(clock_.awaitNextDeadline(5s));
  // While disconnected: b deleted, a changed, c created, d untouched; history compacted.
  server_.erase(kConfigMaps, "ns", "b");                                 // rv(4)
  server_.put(kConfigMaps, makeObject("ns", "a", nullptr, {{"v", 2}}));  // rv(5)
  server_.put(kConfigMaps, makeObject("ns", "c"));                       // rv(6)
  server_.compact();
  clock_.advanceToNextDeadline();

  ASSERT_TRUE(log_.awaitSize(3));
  ASSERT_TRUE(awaitOpenWatch(server_, 3));
  auto entries = log_.entries();
  EXPECT_EQ(entries,
            (std::vector<std::string>{"add ns/c@" + rv(6), "update ns/a@" + rv(1) + "->" + rv(5),
                                      "delete ns/b@" + rv(2)}));
  EXPECT_EQ(informer_->store().keys().size(), 3u);
  EXPECT_EQ(informer_->store().get("ns", "b"), nullptr);
  EXPECT_NE(informer_->store().get("ns", "d"), nullptr);
  EXPECT_EQ(informer_->stats().watch_gone, 1u);
}

TEST_F(InformerTest, AHandlerAddedLateGetsTheCacheThenTheStream) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  server_.put(kConfigMaps, makeObject("ns", "b"));
  make();
  informer_->start();
  ASSERT_TRUE(test_kit::eventually(5s, [&] { return informer_->hasSynced(); }));
  informer_->addEventHandlers(recordInto(log_));
  ASSERT_TRUE(log_.awaitSize(2));
  server_.put(kConfigMaps, makeObject("ns", "c"));
  ASSERT_TRUE(log_.awaitSize(3));
  auto entries = log_.entries();
  std::sort(entries.begin(), entries.begin() + 2);
  EXPECT_EQ(entries, (std::vector<std::string>{"add ns/a@" + rv(1), "add ns/b@" + rv(2),
                                               "add ns/c@" + rv(3)}));
}

TEST_F(InformerTest, ResyncRepeatsEveryObjectAsAnUpdateEachPeriod) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  InformerOptions options;
  options.resync_period = 30s;
  make(options);
  informer_->addEventHandlers(recordInto(log_));
  informer_->start();
  ASSERT_TRUE(log_.awaitSize(1));
  auto deadline = clock_.awaitNextDeadline(5s);
  ASSERT_TRUE(deadline);
  EXPECT_EQ(*deadline - clock_.monotonicNow(), 30s);
  clock_.advance(29s);
  EXPECT_FALSE(log_.awaitSize(2, 20ms)) << "resync fired early";
  clock_.advance(1s);
  ASSERT_TRUE(log_.awaitSize(2));
  EXPECT_EQ(log_.entries()[1], "update ns/a@" + rv(1) + "->" + rv(1));
}

TEST_F(InformerTest, DropManagedFieldsShrinksStoredObjects) {
  auto object = makeObject("ns", "a");
  object["metadata"]["managedFields"] = Json::array({{{"manager", "kube-controller-manager"}}});
  server_.put(kConfigMaps, object);
  InformerOptions options;
  options.transform = dropManagedFields;
  make(options);
  informer_->start();
  ASSERT_TRUE(test_kit::eventually(5s, [&] { return informer_->hasSynced(); }));
  auto stored = informer_->store().get("ns", "a");
  ASSERT_NE(stored, nullptr);
  EXPECT_FALSE(stored->at("metadata").contains("managedFields"));
  EXPECT_EQ(stored->at("metadata").at("name"), "a");
}

TEST_F(InformerTest, OneNamespaceAndALabelSelector) {
  server_.put(kConfigMaps, makeObject("a", "x", {{"app", "web"}}));
  server_.put(kConfigMaps, makeObject("a", "y", {{"app", "db"}}));
  server_.put(kConfigMaps, makeObject("b", "z", {{"app", "web"}}));
  InformerOptions options;
  options.ns = "a";
  options.label_selector = "app=web";
  make(options);
  informer_->addEventHandlers(recordInto(log_));
  informer_->start();
  ASSERT_TRUE(awaitOpenWatch(server_, 1));
  server_.put(kConfigMaps, makeObject("b", "w", {{"app", "web"}}));  // other namespace
  server_.put(kConfigMaps, makeObject("a", "v", {{"app", "web"}}));
  ASSERT_TRUE(log_.awaitSize(2));
  EXPECT_EQ(log_.entries(), (std::vector<std::string>{"add a/x@" + rv(1), "add a/v@" + rv(5)}));
  EXPECT_EQ(informer_->store().listNamespace("a").size(), 2u);
}

TEST_F(InformerTest, AThrowingHandlerDoesNotStopTheOthers) {
  make();
  informer_->addEventHandlers({.on_add = [](const ObjectPtr&) { throw std::runtime_error("boom"); },
                               .on_update = nullptr,
                               .on_delete = nullptr});
  informer_->addEventHandlers(recordInto(log_));
  informer_->start();
  ASSERT_TRUE(awaitOpenWatch(server_, 1));
  server_.put(kConfigMaps, makeObject("ns", "a"));
  server_.put(kConfigMaps, makeObject("ns", "b"));
  ASSERT_TRUE(log_.awaitSize(2));
}

TEST_F(InformerTest, WaitForSyncTimesOutOnTheClockWhileListsFail) {
  server_.failNext({.verb = Verb::List}, FakeKubeClient::kEveryCall,
                   testing::statusError(403, "configmaps is forbidden"));
  make();
  informer_->start();
  std::atomic<bool> result{true};
  std::thread waiter([&] { result = informer_->waitForSync(10s); });
  // Two waiters on the clock: the reflector's backoff and waitForSync's 10 s.
  ASSERT_TRUE(clock_.awaitWaiters(2, 5s));
  clock_.advance(10s);
  waiter.join();
  EXPECT_FALSE(result);
  EXPECT_FALSE(informer_->hasSynced());
}

TEST_F(InformerTest, StopJoinsWithinASecondWhileWatching) {
  InformerOptions options;
  options.resync_period = 1h;
  make(options);
  informer_->start();
  ASSERT_TRUE(awaitOpenWatch(server_, 1));
  auto begin = std::chrono::steady_clock::now();
  informer_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
  informer_->stop();  // idempotent
}

// requestStop() asks every informer at once and returns; stop() then joins. Nothing is
// delivered after the stop, a watch that ends is not reopened, and start() after it is a no-op.
TEST_F(InformerTest, RequestStopAsksAndStopJoinsWithNothingAfter) {
  auto second = std::make_unique<Informer>(server_, kConfigMaps, InformerOptions{}, clock_);
  make();
  informer_->addEventHandlers(recordInto(log_));
  informer_->start();
  second->start();
  ASSERT_TRUE(awaitOpenWatch(server_, 2));
  informer_->requestStop();
  second->requestStop();
  server_.endWatches(std::nullopt);  // a watch ending now must not be reopened
  informer_->stop();
  second->stop();
  const auto watches = server_.calls({.verb = Verb::Watch}).size();
  server_.put(kConfigMaps, makeObject("ns", "late"));
  informer_->start();  // stopped for good
  EXPECT_EQ(server_.calls({.verb = Verb::Watch}).size(), watches);
  EXPECT_FALSE(informer_->store().get("ns/late"));
  EXPECT_TRUE(log_.entries().empty()) << "nothing was listed and nothing may come after the stop";
}

}  // namespace
}  // namespace shardscaler::k8s
