// Reflector against the fake API server: resume after disconnects, bookmarks, 410 relists,
// backoff bounds, pagination, stop.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "cache_test_support.h"
#include "shardscaler/k8s_client/reflector.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;
using cachetest::EventLog;
using cachetest::makeObject;
using testing::FakeKubeClient;
using testing::statusError;
using testing::Verb;

const Resource kConfigMaps{"", "v1", "configmaps", true};
const Resource kSecrets{"", "v1", "secrets", true};

Error connectionReset() { return makeError(ErrorKind::Transport, "connection reset").error(); }

class RecordingSink final : public ReflectorSink {
 public:
  void onReplace(std::vector<ObjectPtr> objects, const std::string& rv) override {
    std::vector<std::string> keys;
    keys.reserve(objects.size());
    for (const auto& o : objects) keys.push_back(objectKey(*o));
    std::sort(keys.begin(), keys.end());
    std::string entry = "replace@" + rv + ":";
    for (const auto& k : keys) entry += k + ",";
    last_objects = std::move(objects);
    log.push(entry);
  }
  void onEvent(WatchEventType type, ObjectPtr object) override {
    const char* name = type == WatchEventType::Added     ? "added"
                       : type == WatchEventType::Deleted ? "deleted"
                                                         : "modified";
    last_event = object;
    log.push(std::string(name) + ":" + objectKey(*object) + "@" + resourceVersionOf(*object));
  }
  EventLog log;
  std::vector<ObjectPtr> last_objects;
  ObjectPtr last_event;
};

class ReflectorTest : public ::testing::Test {
 protected:
  void start(ReflectorOptions options = {}) {
    reflector_ =
        std::make_unique<Reflector>(server_, kConfigMaps, std::move(options), sink_, clock_);
    thread_ = std::thread([this] { reflector_->run(); });
  }
  void TearDown() override {
    if (reflector_) reflector_->stop();
    if (thread_.joinable()) thread_.join();
  }
  // The reflector's current backoff wait, as a duration from now.
  std::chrono::nanoseconds awaitBackoff() {
    auto deadline = clock_.awaitNextDeadline(5s);
    EXPECT_TRUE(deadline.has_value()) << "reflector is not backing off";
    return deadline ? *deadline - clock_.monotonicNow() : std::chrono::nanoseconds::zero();
  }

  bool awaitOpenWatch(std::size_t n) { return cachetest::awaitOpenWatch(server_, n); }
  std::vector<WatchOptions> watchCalls() const {
    std::vector<WatchOptions> out;
    for (const auto& call : server_.calls({.verb = Verb::Watch})) out.push_back(call.watch_options);
    return out;
  }
  std::vector<ListOptions> listCalls() const {
    std::vector<ListOptions> out;
    for (const auto& call : server_.calls({.verb = Verb::List})) out.push_back(call.list_options);
    return out;
  }
  // The resourceVersion after the test's n-th write.
  std::string rv(int n) const { return cachetest::resourceVersionAfter(base_rv_, n); }

  FakeKubeClient server_;
  const std::string base_rv_ = server_.currentResourceVersion();
  ManualClock clock_;
  RecordingSink sink_;
  std::unique_ptr<Reflector> reflector_;
  std::thread thread_;
};

TEST_F(ReflectorTest, ListsThenWatchesFromTheListResourceVersion) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  server_.put(kConfigMaps, makeObject("ns", "b"));
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  EXPECT_EQ(watchCalls()[0].resource_version, rv(2));
  EXPECT_TRUE(watchCalls()[0].allow_bookmarks);
  EXPECT_TRUE(reflector_->hasSynced());
  ASSERT_TRUE(sink_.log.awaitSize(1));
  EXPECT_EQ(sink_.log.entries()[0], "replace@" + rv(2) + ":ns/a,ns/b,");

  server_.put(kConfigMaps, makeObject("ns", "c"));
  server_.erase(kConfigMaps, "ns", "a");
  ASSERT_TRUE(sink_.log.awaitSize(3));
  EXPECT_EQ(sink_.log.entries()[1], "added:ns/c@" + rv(3));
  EXPECT_EQ(sink_.log.entries()[2], "deleted:ns/a@" + rv(4));
  EXPECT_TRUE(
      test_kit::eventually(5s, [&] { return reflector_->lastSyncResourceVersion() == rv(4); }));
}

TEST_F(ReflectorTest, ResumesFromTheBookmarkResourceVersionAfterADisconnect) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  EXPECT_EQ(watchCalls()[0].resource_version, rv(1));

  // Writes elsewhere: the watch sees nothing but a bookmark.
  server_.put(kSecrets, makeObject("ns", "s1"));
  server_.put(kSecrets, makeObject("ns", "s2"));
  server_.bookmark(kConfigMaps);
  ASSERT_TRUE(
      test_kit::eventually(5s, [&] { return reflector_->lastSyncResourceVersion() == rv(3); }));

  server_.endWatches(connectionReset());
  auto delay = awaitBackoff();
  EXPECT_GE(delay, 800ms);
  EXPECT_LE(delay, 1600ms);
  EXPECT_EQ(watchCalls().size(), 1u) << "must not reconnect before the backoff";

  clock_.advanceToNextDeadline();
  ASSERT_TRUE(awaitOpenWatch(2));
  EXPECT_EQ(watchCalls()[1].resource_version, rv(3));
  EXPECT_EQ(listCalls().size(), 1u) << "a disconnect resumes, it does not relist";
  EXPECT_EQ(reflector_->stats().bookmarks, 1u);
  EXPECT_EQ(reflector_->stats().watch_errors, 1u);
}

TEST_F(ReflectorTest, EventsMissedWhileDisconnectedArriveOnResume) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(connectionReset());
  awaitBackoff();
  server_.put(kConfigMaps, makeObject("ns", "b"));  // while nobody watches
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(sink_.log.awaitSize(2));
  EXPECT_EQ(sink_.log.entries()[1], "added:ns/b@" + rv(2));
  server_.put(kConfigMaps, makeObject("ns", "c"));
  ASSERT_TRUE(sink_.log.awaitSize(3));
  EXPECT_EQ(sink_.log.entries().size(), 3u);
  EXPECT_EQ(sink_.log.entries()[2], "added:ns/c@" + rv(3));
}

TEST_F(ReflectorTest, GoneRelistsAtOnceAndWatchesFromTheNewList) {
  server_.put(kConfigMaps, makeObject("ns", "a"));
  server_.put(kConfigMaps, makeObject("ns", "b"));
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(connectionReset());
  awaitBackoff();
  server_.erase(kConfigMaps, "ns", "b");                                 // rv(3)
  server_.put(kConfigMaps, makeObject("ns", "a", nullptr, {{"x", 1}}));  // rv(4)
  server_.put(kConfigMaps, makeObject("ns", "c"));                       // rv(5)
  server_.compact();
  clock_.advanceToNextDeadline();

  // watch from rv(2) -> 410 -> list -> watch from rv(5), with no backoff in between.
  ASSERT_TRUE(awaitOpenWatch(3));
  EXPECT_EQ(watchCalls()[1].resource_version, rv(2));
  EXPECT_EQ(watchCalls()[2].resource_version, rv(5));
  ASSERT_EQ(listCalls().size(), 2u);
  // The first list takes what the watch cache holds; the relist after 410 reads the newest.
  EXPECT_EQ(listCalls()[0].resource_version, "0");
  EXPECT_EQ(listCalls()[1].resource_version, "");
  ASSERT_TRUE(sink_.log.awaitSize(2));
  EXPECT_EQ(sink_.log.entries()[1], "replace@" + rv(5) + ":ns/a,ns/c,");
  EXPECT_EQ(reflector_->stats().watch_gone, 1u);
  EXPECT_EQ(reflector_->stats().lists, 2u);
}

TEST_F(ReflectorTest, WatchRestartHookHearsDisconnectsAndGone) {
  std::mutex mutex;
  std::vector<std::string> reasons;
  ReflectorOptions options;
  options.on_watch_restart = [&](std::string_view why) {
    std::lock_guard lock(mutex);
    reasons.emplace_back(why);
  };
  server_.put(kConfigMaps, makeObject("ns", "a"));
  start(std::move(options));
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(connectionReset());
  awaitBackoff();
  server_.put(kConfigMaps, makeObject("ns", "b"));
  server_.compact();
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(awaitOpenWatch(3));  // resumed, got 410, relisted, watching again
  std::lock_guard lock(mutex);
  EXPECT_EQ(reasons, (std::vector<std::string>{"error", "gone"}));
}

TEST_F(ReflectorTest, RepeatedGoneWithoutEventsBacksOff) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.failNext({.verb = Verb::Watch}, 1, statusError(410, "too old resource version"));
  server_.endWatches(statusError(410, "too old resource version"));
  // First 410: relist at once; the next watch fails with 410 again: now it backs off.
  auto delay = awaitBackoff();
  EXPECT_GE(delay, 800ms);
  EXPECT_EQ(listCalls().size(), 2u);
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(awaitOpenWatch(3));
  EXPECT_EQ(listCalls().size(), 3u);
}

TEST_F(ReflectorTest, BackoffDoublesUpToThirtySecondsWithJitter) {
  start();
  auto base = std::chrono::nanoseconds(800ms);
  for (std::size_t round = 1; round <= 8; ++round) {
    ASSERT_TRUE(awaitOpenWatch(round)) << "round " << round;
    server_.endWatches(connectionReset());
    auto delay = awaitBackoff();
    EXPECT_GE(delay, std::min(base, std::chrono::nanoseconds(30s))) << "round " << round;
    EXPECT_LE(delay, std::min(2 * base, std::chrono::nanoseconds(30s))) << "round " << round;
    base *= 2;
    clock_.advanceToNextDeadline();
  }
  EXPECT_EQ(listCalls().size(), 1u);
}

TEST_F(ReflectorTest, ListErrorsBackOffAndRetry) {
  server_.failNext({.verb = Verb::List}, 1, statusError(503, "unavailable"));
  start();
  auto delay = awaitBackoff();
  EXPECT_GE(delay, 800ms);
  EXPECT_FALSE(reflector_->hasSynced());
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(awaitOpenWatch(1));
  EXPECT_TRUE(reflector_->hasSynced());
  EXPECT_EQ(reflector_->stats().list_errors, 1u);
}

TEST_F(ReflectorTest, NonTransientWatchErrorRelistsAfterBackoff) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(statusError(403, "configmaps is forbidden"));
  awaitBackoff();
  EXPECT_EQ(listCalls().size(), 1u);
  clock_.advanceToNextDeadline();
  ASSERT_TRUE(awaitOpenWatch(2));
  EXPECT_EQ(listCalls().size(), 2u);
}

TEST_F(ReflectorTest, RetryAfterIsHonoured) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(statusError(429, "too many requests", "", 20s));
  EXPECT_GE(awaitBackoff(), 20s);
}

TEST_F(ReflectorTest, ANormalEndAfterEventsRewatchesAtOnce) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.put(kConfigMaps, makeObject("ns", "a"));  // rv(1)
  ASSERT_TRUE(sink_.log.awaitSize(2));
  server_.endWatches(std::nullopt);  // server-side timeout
  ASSERT_TRUE(awaitOpenWatch(2));
  EXPECT_EQ(watchCalls()[1].resource_version, rv(1));
  EXPECT_EQ(clock_.waiterCount(), 0u);
}

TEST_F(ReflectorTest, AnEmptyInstantEndCountsAsAFailure) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  server_.endWatches(std::nullopt);
  EXPECT_GE(awaitBackoff(), 800ms);
}

TEST_F(ReflectorTest, ListsPageByPage) {
  for (int i = 0; i < 5; ++i) server_.put(kConfigMaps, makeObject("ns", "o" + std::to_string(i)));
  ReflectorOptions options;
  options.page_size = 2;
  start(options);
  ASSERT_TRUE(awaitOpenWatch(1));
  auto lists = listCalls();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0].limit, 2);
  EXPECT_EQ(lists[0].continue_token, "");
  EXPECT_EQ(lists[0].resource_version, "0");
  EXPECT_EQ(lists[1].continue_token, "2");
  EXPECT_EQ(lists[1].resource_version, "") << "a continue token carries its own version";
  EXPECT_EQ(lists[2].continue_token, "4");
  EXPECT_EQ(sink_.log.entries()[0], "replace@" + rv(5) + ":ns/o0,ns/o1,ns/o2,ns/o3,ns/o4,");
}

TEST_F(ReflectorTest, SelectorsAndNamespaceReachListAndWatch) {
  server_.put(kConfigMaps, makeObject("a", "x", {{"app", "web"}}));
  server_.put(kConfigMaps, makeObject("a", "y", {{"app", "db"}}));
  server_.put(kConfigMaps, makeObject("b", "z", {{"app", "web"}}));
  ReflectorOptions options;
  options.ns = "a";
  options.label_selector = "app=web";
  options.field_selector = "metadata.name!=q";
  start(options);
  ASSERT_TRUE(awaitOpenWatch(1));
  EXPECT_EQ(listCalls()[0].label_selector, "app=web");
  EXPECT_EQ(listCalls()[0].field_selector, "metadata.name!=q");
  EXPECT_EQ(watchCalls()[0].label_selector, "app=web");
  EXPECT_EQ(watchCalls()[0].field_selector, "metadata.name!=q");
  EXPECT_EQ(sink_.log.entries()[0], "replace@" + rv(3) + ":a/x,");
}

TEST_F(ReflectorTest, TransformRunsOnListedAndWatchedObjects) {
  auto listed = makeObject("ns", "a");
  listed["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  server_.put(kConfigMaps, listed);
  ReflectorOptions options;
  options.transform = [](Json& o) { o["metadata"].erase("managedFields"); };
  start(options);
  ASSERT_TRUE(awaitOpenWatch(1));
  ASSERT_EQ(sink_.last_objects.size(), 1u);
  EXPECT_FALSE(sink_.last_objects[0]->at("metadata").contains("managedFields"));
  auto watched = makeObject("ns", "b");
  watched["metadata"]["managedFields"] = Json::array();
  server_.put(kConfigMaps, watched);
  ASSERT_TRUE(sink_.log.awaitSize(2));
  EXPECT_FALSE(sink_.last_event->at("metadata").contains("managedFields"));
}

TEST_F(ReflectorTest, MetadataOnlyAndFieldsReachListAndWatch) {
  auto listed = makeObject("ns", "a", {{"app", "web"}, {"tier", "x"}});
  listed["data"] = {{"big", "value"}};
  server_.put(kConfigMaps, listed);
  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  fields->keep({"metadata", "name"}).keep({"metadata", "namespace"});
  fields->keep({"metadata", "resourceVersion"}).keep({"metadata", "labels", "app"});
  ReflectorOptions options;
  options.metadata_only = true;
  options.fields = fields;
  start(options);
  ASSERT_TRUE(awaitOpenWatch(1));
  EXPECT_TRUE(listCalls()[0].metadata_only);
  EXPECT_EQ(listCalls()[0].fields, fields);
  EXPECT_TRUE(watchCalls()[0].metadata_only);
  EXPECT_EQ(watchCalls()[0].fields, fields);
  ASSERT_EQ(sink_.last_objects.size(), 1u);
  EXPECT_EQ(sink_.last_objects[0]->dump(),
            R"({"metadata":{"labels":{"app":"web"},"name":"a","namespace":"ns",)"
            R"("resourceVersion":")" +
                resourceVersionOf(*sink_.last_objects[0]) + R"("}})");
  server_.put(kConfigMaps, makeObject("ns", "b", {{"tier", "y"}}));
  ASSERT_TRUE(sink_.log.awaitSize(2));
  // Objects on the way to a kept field stay, even when nothing in them is kept.
  EXPECT_EQ(sink_.last_event->at("metadata").at("labels"), Json::object());
  EXPECT_FALSE(sink_.last_event->contains("kind"));
}

TEST_F(ReflectorTest, WatchTimeoutIsSpreadBetweenOnceAndTwiceTheMinimum) {
  ReflectorOptions options;
  options.min_watch_timeout = 300s;
  start(options);
  ASSERT_TRUE(awaitOpenWatch(1));
  auto timeout = watchCalls()[0].timeout_seconds;
  EXPECT_GE(timeout, 300);
  EXPECT_LT(timeout, 600);
}

TEST_F(ReflectorTest, StopEndsAnOpenWatchPromptly) {
  start();
  ASSERT_TRUE(awaitOpenWatch(1));
  auto begin = std::chrono::steady_clock::now();
  reflector_->stop();
  thread_.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
}

TEST_F(ReflectorTest, StopEndsABackoffWaitWithoutTimeMoving) {
  server_.failNext({.verb = Verb::List}, FakeKubeClient::kEveryCall, statusError(500, "boom"));
  start();
  awaitBackoff();
  auto begin = std::chrono::steady_clock::now();
  reflector_->stop();
  thread_.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
}

}  // namespace
}  // namespace shardscaler::k8s
