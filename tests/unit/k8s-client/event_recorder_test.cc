// KubeEventRecorder: the Event it writes, its correlation (count bumps within the window, a new
// Event after it or when the old one is gone), and what it does when it cannot write.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::k8s {
namespace {

using namespace std::chrono_literals;

// Events only: records creates and patches and answers as the test says. Every other verb is an
// error, so a recorder that used one would fail the test.
class EventsOnlyClient final : public KubeClient {
 public:
  struct Write {
    std::string verb;  // "create" or "patch"
    std::string ns;
    std::string name;
    Json body;
  };

  std::vector<Write> writes() {
    std::lock_guard lock(mutex_);
    return writes_;
  }
  void failCreates(std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    create_error_ = std::move(error);
  }
  void failPatches(std::optional<Error> error) {
    std::lock_guard lock(mutex_);
    patch_error_ = std::move(error);
  }
  // Creates wait until unblock() (bounded by real time, so a failing test still ends).
  void blockCreates() {
    std::lock_guard lock(mutex_);
    blocked_ = true;
  }
  void unblock() {
    std::lock_guard lock(mutex_);
    blocked_ = false;
    changed_.notify_all();
  }
  bool awaitBlockedCreate(std::chrono::milliseconds real_timeout = 5s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, real_timeout, [&] { return waiting_ > 0; });
  }

  Result<Json> create(const Resource& r, const std::string& ns, const Json& obj) override {
    std::unique_lock lock(mutex_);
    if (r.resource != "events") return notFaked();
    ++waiting_;
    changed_.notify_all();
    changed_.wait_for(lock, 5s, [&] { return !blocked_; });
    --waiting_;
    writes_.push_back({"create", ns, obj["metadata"]["name"].get<std::string>(), obj});
    if (create_error_) return std::unexpected(*create_error_);
    return obj;
  }
  Result<Json> patch(const Resource& r, const std::string& ns, const std::string& name,
                     PatchType type, const Json& patch, const std::string& = {}) override {
    std::lock_guard lock(mutex_);
    if (r.resource != "events" || type != PatchType::Merge) return notFaked();
    writes_.push_back({"patch", ns, name, patch});
    if (patch_error_) return std::unexpected(*patch_error_);
    return patch;
  }
  Result<Json> get(const Resource&, const std::string&, const std::string&,
                   const std::string& = {}) override {
    return notFaked();
  }
  Result<Json> list(const Resource&, const std::string&, const ListOptions& = {}) override {
    return notFaked();
  }
  Result<Json> update(const Resource&, const std::string&, const Json&,
                      const std::string& = {}) override {
    return notFaked();
  }
  Result<Json> remove(const Resource&, const std::string&, const std::string&,
                      const DeleteOptions& = {}) override {
    return notFaked();
  }
  Result<void> watch(const Resource&, const std::string&, const WatchOptions&, const WatchHandler&,
                     const std::atomic<bool>* = nullptr) override {
    return makeError(ErrorKind::BadRequest, "watch not faked");
  }

 private:
  static std::unexpected<Error> notFaked() { return makeError(ErrorKind::BadRequest, "not faked"); }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Write> writes_;
  std::optional<Error> create_error_;
  std::optional<Error> patch_error_;
  bool blocked_ = false;
  int waiting_ = 0;
};

InvolvedObject shardSet(std::string name = "web") {
  return {.api_version = "shardscaler.io/v1alpha1",
          .kind = "ShardSet",
          .ns = "monitoring",
          .name = std::move(name),
          .uid = "uid-1",
          .resource_version = "42"};
}

Error errorOf(ErrorKind kind, int status) {
  return Error{.kind = kind, .http_status = status, .reason = {}, .message = "injected"};
}

TEST(EventRecorderTest, WritesACoreV1EventAboutTheObject) {
  ManualClock clock;
  EventsOnlyClient client;
  {
    KubeEventRecorder recorder(client, clock, {.component = "shardscaler", .instance = "pod-0"});
    recorder.record(shardSet(), EventType::Warning, "ShardRetained", "shard 2 retained");
    recorder.flush();
  }
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].verb, "create");
  EXPECT_EQ(writes[0].ns, "monitoring");
  const Json& event = writes[0].body;
  EXPECT_EQ(event["kind"], "Event");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["reason"], "ShardRetained");
  EXPECT_EQ(event["message"], "shard 2 retained");
  EXPECT_EQ(event["count"], 1);
  EXPECT_EQ(event["involvedObject"]["kind"], "ShardSet");
  EXPECT_EQ(event["involvedObject"]["name"], "web");
  EXPECT_EQ(event["involvedObject"]["uid"], "uid-1");
  EXPECT_EQ(event["source"]["component"], "shardscaler");
  EXPECT_EQ(event["reportingInstance"], "pod-0");
  EXPECT_EQ(event["firstTimestamp"], formatTime(clock.now()));
  EXPECT_EQ(event["metadata"]["name"].get<std::string>().rfind("web.", 0), 0u);
}

// An Event about a cluster-scoped object (an APIService) lives in "default", where client-go's
// recorder puts it and `kubectl describe` looks; its involvedObject has no namespace.
TEST(EventRecorderTest, AnEventAboutAClusterScopedObjectLivesInDefault) {
  ManualClock clock;
  EventsOnlyClient client;
  const InvolvedObject api_service{.api_version = "apiregistration.k8s.io/v1",
                                   .kind = "APIService",
                                   .name = "v1beta1.external.metrics.k8s.io",
                                   .uid = "uid-2"};
  KubeEventRecorder recorder(client, clock, {});
  recorder.record(api_service, EventType::Warning, "ApiServiceNotOurs", "left in place");
  recorder.flush();
  recorder.record(api_service, EventType::Warning, "ApiServiceNotOurs", "left in place");
  recorder.flush();
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].ns, "default");
  EXPECT_EQ(writes[0].body["metadata"]["namespace"], "default");
  EXPECT_EQ(writes[0].body["involvedObject"]["namespace"], "");
  EXPECT_EQ(writes[1].verb, "patch");
  EXPECT_EQ(writes[1].ns, "default");
}

TEST(EventRecorderTest, TheSameEventWithinTheWindowBumpsTheCountOfTheFirst) {
  ManualClock clock;
  EventsOnlyClient client;
  KubeEventRecorder recorder(client, clock, {.aggregation_window = 10min});
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "3 -> 2");
  recorder.flush();
  clock.advance(9min);
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "3 -> 2");
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "2 -> 1");  // another message
  recorder.flush();
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[1].verb, "patch");
  EXPECT_EQ(writes[1].name, writes[0].name);
  EXPECT_EQ(writes[1].body["count"], 2);
  EXPECT_EQ(writes[1].body["lastTimestamp"], formatTime(clock.now()));
  EXPECT_EQ(writes[2].verb, "create");
  EXPECT_EQ(writes[2].body["message"], "2 -> 1");
}

TEST(EventRecorderTest, AfterTheWindowOrOnceTheEventIsGoneANewEventIsCreated) {
  ManualClock clock;
  EventsOnlyClient client;
  KubeEventRecorder recorder(client, clock, {.aggregation_window = 10min});
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "3 -> 2");
  recorder.flush();
  clock.advance(11min);
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "3 -> 2");
  recorder.flush();
  client.failPatches(errorOf(ErrorKind::NotFound, 404));  // the server's event TTL took it
  recorder.record(shardSet(), EventType::Normal, "TargetScaled", "3 -> 2");
  recorder.flush();
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[0].verb, "create");
  EXPECT_EQ(writes[1].verb, "create");  // after the window
  EXPECT_EQ(writes[2].verb, "patch");   // within the window of the second, but gone
  EXPECT_EQ(writes[2].name, writes[1].name);
  EXPECT_EQ(writes[3].verb, "create");
  EXPECT_EQ(writes[3].body["count"], 1);
}

TEST(EventRecorderTest, AFailedWriteIsReportedAndDoesNotCorrelate) {
  ManualClock clock;
  EventsOnlyClient client;
  std::vector<std::string> degraded;
  KubeEventRecorder recorder(client, clock, {},
                             [&](const std::string& reason) { degraded.push_back(reason); });
  client.failCreates(errorOf(ErrorKind::Forbidden, 403));
  recorder.record(shardSet(), EventType::Warning, "ApplyFailed", "forbidden");
  recorder.flush();
  client.failCreates(std::nullopt);
  recorder.record(shardSet(), EventType::Warning, "ApplyFailed", "forbidden");
  recorder.flush();
  EXPECT_EQ(degraded, std::vector<std::string>{"event_write_failed"});
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[1].verb, "create");  // nothing to bump: the first was never written
}

TEST(EventRecorderTest, BeyondTheQueueLimitEventsAreDroppedAndReported) {
  ManualClock clock;
  EventsOnlyClient client;
  std::vector<std::string> degraded;
  client.blockCreates();
  KubeEventRecorder recorder(client, clock, {.queue_limit = 1},
                             [&](const std::string& reason) { degraded.push_back(reason); });
  recorder.record(shardSet("a"), EventType::Normal, "TargetScaled", "in flight");
  ASSERT_TRUE(client.awaitBlockedCreate());
  recorder.record(shardSet("b"), EventType::Normal, "TargetScaled", "queued");
  recorder.record(shardSet("c"), EventType::Normal, "TargetScaled", "dropped");
  EXPECT_EQ(degraded, std::vector<std::string>{"event_dropped"});
  client.unblock();
  recorder.flush();
  auto writes = client.writes();
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].body["message"], "in flight");
  EXPECT_EQ(writes[1].body["message"], "queued");
}

}  // namespace
}  // namespace shardscaler::k8s
