// shardscaler with the Prometheus Operator as it really behaves (docs/design/operator.md): the
// operator's own shard retention before, during and after a claim; an agent in DaemonSet mode;
// a target deleted and re-created under retained shards; a second writer of spec.shards.
#include <gmock/gmock.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/planner/deadline.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr const char* kOperatorDeadline = "operator.prometheus.io/deletion-deadline";

class OperatorTest : public ShardSetScenario {
 protected:
  Json statefulSetObject(int index) const {
    auto view = statefulSet(index);
    if (!view) return Json();
    return getOrNull(k8s::resources::statefulSets(), ns_, view->name);
  }

  std::string annotation(int index, const std::string& key) const {
    const Json sts = statefulSetObject(index);
    if (sts.is_null()) return "";
    return sts["metadata"].value("annotations", Json::object()).value(key, "");
  }

  // The deadline an annotation holds, for comparing values written in different formats.
  static std::optional<std::chrono::system_clock::time_point> deadlineOf(const std::string& text) {
    auto parsed = planner::parseDeletionTimestamp(text);
    if (!parsed || parsed->isNever()) return std::nullopt;
    return parsed->time().toTimePoint();
  }

  std::vector<std::string> controllerOwnerKinds(int index) const {
    std::vector<std::string> kinds;
    const Json sts = statefulSetObject(index);
    if (sts.is_null()) return kinds;
    for (const Json& ref : sts["metadata"].value("ownerReferences", Json::array())) {
      if (ref.value("controller", false)) kinds.push_back(ref.value("kind", ""));
    }
    return kinds;
  }

  ::testing::AssertionResult waitForCondition(const std::string& type, const std::string& reason,
                                              const std::string& in_message,
                                              std::chrono::seconds timeout = 60s) {
    return waitFor(
        type + " reason " + reason,
        [&](std::string* seen) {
          auto c = condition(type);
          *seen = c ? c->dump() : "no " + type + " condition";
          return c && c->value("reason", "") == reason &&
                 c->value("message", "").find(in_message) != std::string::npos;
        },
        timeout);
  }
};

// The operator's own Retain kept shard 2 before any ShardSet existed. A ShardSet that says Delete
// neither deletes it nor gives it a new deadline (the safer policy wins, the operator's deadline
// is kept), and after the ShardSet is gone the shard is still there with that deadline.
TEST_F(OperatorTest, TheOperatorsOwnRetentionHoldsBeforeDuringAndAfterAClaim) {
  createPrometheus(3,
                   "  shardRetentionPolicy:\n    whenScaled: Retain\n    retain:\n"
                   "      retentionPeriod: 1h\n");
  ASSERT_TRUE(waitFor("3 shards", [&](std::string*) { return statefulSets().size() == 3; }));
  const auto uids = statefulSetUids();
  auto lowered =
      kubectl("patch prometheus main -n " + ns_ + " --type=merge -p '{\"spec\":{\"shards\":2}}'");
  ASSERT_EQ(lowered.exit_code, 0) << lowered.err;
  std::string kept_until;
  ASSERT_TRUE(waitFor("the operator to retain shard 2", [&](std::string* seen) {
    kept_until = annotation(2, kOperatorDeadline);
    *seen = kept_until;
    return !kept_until.empty();
  }));
  const auto deadline = deadlineOf(kept_until);
  ASSERT_TRUE(deadline) << kept_until;
  EXPECT_GT(*deadline, std::chrono::system_clock::now() + 50min);

  applyShardSet({.shards = 2, .when_scaled = "Delete"});
  ASSERT_TRUE(waitForSettled(2, 1, 90s));
  auto adopted = statefulSet(2);
  ASSERT_TRUE(adopted && adopted->retained) << "shard 2 was not adopted as retained";
  EXPECT_EQ(deadlineOf(annotation(2, "shardscaler.io/deletion-deadline")), deadline)
      << "adopting the shard moved the operator's deadline";
  EXPECT_EQ(deadlineOf(annotation(2, kOperatorDeadline)), deadline);
  const Json status = shardSet()["status"];
  ASSERT_EQ(status["retainedShards"].size(), 1u) << status.dump();
  EXPECT_EQ(deadlineOf(status["retainedShards"][0].value("deletionTimestamp", "")), deadline)
      << status.dump();

  std::this_thread::sleep_for(5s);
  EXPECT_EQ(statefulSetUids(), uids) << "a shard either policy keeps was deleted";

  auto released = kubectl("delete shardset main -n " + ns_ + " --wait=true --timeout=60s");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  std::this_thread::sleep_for(5s);
  EXPECT_EQ(statefulSetUids(), uids) << "a shard was deleted on release";
  EXPECT_EQ(deadlineOf(annotation(2, kOperatorDeadline)), deadline)
      << "the operator's deadline did not survive the release";
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
}

// Without the guard, someone scales the claimed Prometheus itself (its own scale subresource)
// from 3 to 1. While the ShardSet claims it, the target's own shardRetentionPolicy retains, so the
// operator (v0.92+, native retention on) keeps shards 1 and 2 instead of deleting them, and
// shardscaler puts spec.shards back: nothing is deleted or replaced. The release gives the target
// its own policy (none) back.
TEST_F(OperatorTest, AForeignScaleDownOfTheClaimedTargetDeletesNothingWithoutTheGuard) {
  createPrometheus(3);
  applyShardSet({.shards = 3});
  ASSERT_TRUE(waitForSettled(3, 0));
  const auto uids = statefulSetUids();
  auto scaled = kubectl("scale prometheus/main -n " + ns_ + " --replicas=1");
  ASSERT_EQ(scaled.exit_code, 0) << scaled.err;
  ASSERT_TRUE(waitFor("the operator to act on spec.shards=1 (keep or delete shards 1 and 2)",
                      [&](std::string* seen) {
                        std::set<int> acted;
                        for (const auto& a : emulatorStatefulSetWrites("delete")) {
                          if (a.shard) acted.insert(*a.shard);
                        }
                        for (const auto& a : emulatorStatefulSetWrites("patch")) {
                          if (a.shard &&
                              a.reason.find("shardRetentionPolicy Retain") != std::string::npos) {
                            acted.insert(*a.shard);
                          }
                        }
                        *seen = ::testing::PrintToString(acted);
                        return acted.contains(1) && acted.contains(2);
                      }));
  ASSERT_TRUE(waitForSettled(3, 0, 90s));
  EXPECT_EQ(statefulSetUids(), uids) << "a shard was deleted or replaced";
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  // Expected again, each is updated by the operator's next sync, which drops its deadline.
  EXPECT_TRUE(waitFor(
      "the operator's deadlines gone from the shards it expects again", [&](std::string* seen) {
        *seen = annotation(1, kOperatorDeadline) + " " + annotation(2, kOperatorDeadline);
        return annotation(1, kOperatorDeadline).empty() && annotation(2, kOperatorDeadline).empty();
      }));

  auto released = kubectl("delete shardset main -n " + ns_ + " --wait=true --timeout=60s");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  const Json target = prometheus();
  EXPECT_FALSE(target["spec"].contains("shardRetentionPolicy")) << target["spec"].dump();
  EXPECT_FALSE(target["metadata"]
                   .value("annotations", Json::object())
                   .contains("shardscaler.io/saved-shard-retention-policy"))
      << target["metadata"].dump();
  EXPECT_EQ(statefulSetUids(), uids);
}

// A PrometheusAgent in DaemonSet mode has no shards: InvalidSpec that says so, and the target is
// left alone (no claim, no pause), not an ApplyFailed loop.
TEST_F(OperatorTest, ADaemonSetModeAgentIsAnInvalidSpecAndLeftAlone) {
  apply(
      "apiVersion: monitoring.coreos.com/v1alpha1\nkind: PrometheusAgent\nmetadata: {name: "
      "main, namespace: " +
      ns_ + "}\nspec:\n  mode: DaemonSet\n");
  applyShardSet({.target_kind = "PrometheusAgent", .shards = 2});
  ASSERT_TRUE(waitForCondition("Ready", "InvalidSpec", "DaemonSet"));
  std::this_thread::sleep_for(5s);
  auto agent = kubectl("get prometheusagent main -n " + ns_ + " -o json");
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  const Json target = Json::parse(agent.out);
  const Json annotations = target["metadata"].value("annotations", Json::object());
  EXPECT_FALSE(annotations.contains("shardscaler.io/claimed-by")) << annotations.dump();
  EXPECT_FALSE(target["spec"].value("paused", false));
  EXPECT_FALSE(target["spec"].contains("shards")) << target["spec"].dump();
  const auto events = shardSetEvents();
  EXPECT_FALSE(std::ranges::any_of(events, [](const std::string& e) {
    return e.starts_with("ApplyFailed");
  })) << ::testing::PrintToString(events);
}

// Retained shards belong to the ShardSet, not to the target: deleting the Prometheus (the
// garbage collector of the controller-manager is running) takes only its active shard; the
// re-created Prometheus gets its retained shards back. Deleting the ShardSet then lets go of them
// without deleting them.
TEST_F(OperatorTest, DeletingAndRecreatingTheTargetKeepsRetainedShards) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  scaleWithKubectl(1);
  ASSERT_TRUE(waitForSettled(1, 2, 90s));
  std::map<int, std::string> retained_uids;
  for (int i : {1, 2}) {
    retained_uids[i] = statefulSet(i)->uid;
    EXPECT_EQ(controllerOwnerKinds(i), std::vector<std::string>{"ShardSet"}) << "shard " << i;
  }
  const std::string active_uid = statefulSet(0)->uid;

  auto deleted = kubectl("delete prometheus main -n " + ns_ + " --wait=true --timeout=60s");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  ASSERT_TRUE(waitFor(
      "the garbage collector to delete the active shard",
      [&](std::string* seen) {
        auto active = statefulSet(0);
        *seen = active ? "still there" : "gone";
        return !active || active->uid != active_uid;
      },
      60s));
  std::this_thread::sleep_for(5s);
  for (int i : {1, 2}) {
    auto kept = statefulSet(i);
    ASSERT_TRUE(kept && kept->uid == retained_uids[i] && !kept->being_deleted)
        << "retained shard " << i << " went with its target";
  }

  createPrometheus(1);
  ASSERT_TRUE(waitForSettled(1, 2, 90s));
  for (int i : {1, 2}) EXPECT_EQ(statefulSet(i)->uid, retained_uids[i]);

  auto released = kubectl("delete shardset main -n " + ns_ + " --wait=true --timeout=60s");
  ASSERT_EQ(released.exit_code, 0) << released.err;
  std::this_thread::sleep_for(5s);
  for (int i : {1, 2}) {
    auto kept = statefulSet(i);
    ASSERT_TRUE(kept && kept->uid == retained_uids[i] && !kept->being_deleted)
        << "retained shard " << i << " went with its ShardSet";
    EXPECT_TRUE(controllerOwnerKinds(i).empty()) << "shard " << i;
  }
}

// A GitOps tool that declares spec.shards on the claimed target (server-side apply under its own
// field manager) is named in a Warning condition and Event; shardscaler's count stands.
TEST_F(OperatorTest, ASecondFieldManagerOfSpecShardsIsReported) {
  createPrometheus(2);
  applyShardSet({.shards = 2, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(2, 0));
  auto applied =
      kubectl("apply --server-side --force-conflicts --field-manager=argocd-controller -f -",
              "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
              "namespace: " +
                  ns_ + "}\nspec:\n  replicas: 1\n  shards: 3\n");
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  ASSERT_TRUE(waitForCondition("OtherWriters", "FieldManagerConflict", "argocd-controller"));
  EXPECT_THAT(condition("OtherWriters")->value("message", ""),
              ::testing::HasSubstr("kubectl scale shardset/main"));
  ASSERT_TRUE(waitFor("a FieldManagerConflict Event", [&](std::string* seen) {
    const auto events = shardSetEvents();
    *seen = ::testing::PrintToString(events);
    return std::ranges::any_of(events, [](const std::string& e) {
      return e.starts_with("FieldManagerConflict: ") &&
             e.find("argocd-controller") != std::string::npos;
    });
  }));
  ASSERT_TRUE(waitFor("spec.shards back to the ShardSet's 2", [&](std::string* seen) {
    const Json target = prometheus();
    *seen = target["spec"].dump();
    return target["spec"].value("shards", 0) == 2 && !target["spec"].value("paused", false);
  }));
}

}  // namespace
}  // namespace shardscaler::e2e
