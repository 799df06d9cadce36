// The controller unit tests' world: a ShardSetController (with its Event recorder) against the
// FakeKubeClient of k8s_testing, a ManualClock, and the controller's shapes of the test objects.
// Tests only; reconciles are called directly, no worker runs.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/controller/shard_set_controller.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

namespace shardscaler::controller::testing {

using k8s::EventRecorder;
using k8s::EventType;
using k8s::InvolvedObject;
using k8s::Json;
using k8s::ReconcileOutcome;
using k8s::testing::CallMatch;
using k8s::testing::FakeKubeClient;
using k8s::testing::Verb;

inline constexpr const char* kNs = "monitoring";
inline constexpr const char* kKey = "monitoring/main";
inline constexpr const char* kFinalizer = "shardscaler.io/release-target";
inline constexpr const char* kBoundAnnotation = "shardscaler.io/target";

// Events as recorded, for assertions; the KubeEventRecorder's own behaviour (correlation, its
// writes) is tested where it lives.
class RecordingEvents final : public EventRecorder {
 public:
  struct Recorded {
    EventType type;
    std::string reason;
    std::string message;
  };
  void record(const InvolvedObject&, EventType type, const std::string& reason,
              const std::string& message) override {
    std::lock_guard lock(mutex_);
    recorded_.push_back({type, reason, message});
  }
  std::vector<Recorded> recorded() const {
    std::lock_guard lock(mutex_);
    return recorded_;
  }
  bool has(const std::string& reason) const {
    std::lock_guard lock(mutex_);
    for (const auto& r : recorded_) {
      if (r.reason == reason) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Recorded> recorded_;
};

using test_objects::shardName;

inline Json shardSetJson(int shards, const std::string& target = "main") {
  return test_objects::shardSetJson(shards, Json::object(),
                                    {.target_name = target, .generation = std::nullopt});
}

// The controller's target: the fake gives it a uid and resourceVersion; one replica.
inline Json prometheusJson(int shards) {
  return test_objects::targetJson(shards, Json::object(),
                                  {.uid = "",
                                   .resource_version = "",
                                   .generation = std::nullopt,
                                   .claimed_by = "",
                                   .replicas = 1});
}

// A StatefulSet as the operator creates it for shard `index` of `target` (uid of the owner), before
// shardscaler labels it for the guard.
inline Json statefulSetJson(int index, const std::string& target_uid) {
  return test_objects::attachedShard(index, {.target_uid = target_uid,
                                             .guard_label = false,
                                             .uid_prefix = "",
                                             .resource_version_base = std::nullopt,
                                             .replicas = 1});
}

class ControllerTest : public ::testing::Test {
 protected:
  // The Prometheus `main` with `shards` shards, as the operator leaves it; only the first
  // `created` StatefulSets exist when fewer (the operator has not created the rest yet).
  Json putTarget(int shards) { return putTarget(shards, shards); }
  Json putTarget(int shards, int created) {
    Json target =
        fake_.put(planner::targetResource(planner::TargetKind::Prometheus), prometheusJson(shards));
    for (int i = 0; i < created; ++i) {
      fake_.put(k8s::resources::statefulSets(),
                statefulSetJson(i, target["metadata"]["uid"].get<std::string>()));
    }
    return target;
  }

  // The one place the controller and its Event recorder are built (a later move of either is
  // one edit here). Starts its informers and waits (bounded, real time) until they synced.
  void startController(ShardSetControllerOptions options = {}) {
    options.namespaces = {kNs};
    options.workers = 0;
    controller_ =
        std::make_unique<ShardSetController>(fake_, clock_, events_, nullptr, std::move(options));
    controller_->startInformers();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!controller_->hasSynced()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "informers did not sync";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // A reconcile of `main` once the informers' caches show every change made so far (the
  // controller reads the ShardSet from its cache). Its calls alone are in the record after.
  ReconcileOutcome reconcile() {
    EXPECT_TRUE(fake_.awaitWatchesDelivered(kWatches)) << "the informers fell behind";
    fake_.clearCalls();
    return controller_->reconcile(kKey);
  }

  // A reconcile that only claims the target or guards shards writes no status; the next one
  // (planned from the caches once they hold those writes) does. Both, when the first asked for
  // the second; the record holds the last one's calls.
  ReconcileOutcome reconcileToStatus() {
    ReconcileOutcome claimed = reconcile();
    if (claimed.result != k8s::ReconcileResult::Success || !claimed.requeue_after) return claimed;
    return reconcile();
  }

  std::optional<Json> shardSet() const { return fake_.find(api::shardSets(), kNs, "main"); }
  std::optional<Json> target() const {
    return fake_.find(planner::targetResource(planner::TargetKind::Prometheus), kNs, "main");
  }

  std::vector<k8s::testing::Call> statusWrites() const {
    auto writes = fake_.calls({.resource = "shardsets", .subresource = "status"});
    std::erase_if(writes, [](const auto& c) { return c.verb == Verb::Get; });
    return writes;
  }

  void TearDown() override {
    fake_.stopWatches();
    if (controller_) controller_->stop(std::chrono::seconds(0));
  }

  // ShardSets, Prometheuses, PrometheusAgents and StatefulSets of one namespace.
  static constexpr std::size_t kWatches = 4;

  k8s::ManualClock clock_;
  FakeKubeClient fake_{&clock_};
  RecordingEvents events_;
  std::unique_ptr<ShardSetController> controller_;
};

// "patch prometheuses.monitoring.coreos.com/v1 main [status]: {...}": for failure messages.
inline std::string describe(const std::vector<k8s::testing::Call>& calls) {
  std::string out;
  for (const auto& c : calls) {
    out += std::string(k8s::testing::toString(c.verb)) + " " + c.resource.resource + " " + c.name +
           (c.subresource.empty() ? "" : " [" + c.subresource + "]") +
           (c.body.is_null() ? "" : ": " + c.body.dump()) +
           (c.error ? " -> " + c.error->describe() : "") + "\n";
  }
  return out;
}

}  // namespace shardscaler::controller::testing
