// Issue 10 at a functional size: 100 ShardSets over 100 Prometheus targets with 10 shards each
// (1,000 StatefulSets the operator emulator creates, replicas 0) in one namespace. Every ShardSet
// converges with a correct status, every shard carries its guard label, and a few transitions in
// the loaded namespace touch only their own ShardSets. It asserts outcomes, never timing.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/reasons.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kTargets = 100;
constexpr int kShards = 10;

const auto kNamesOnly =
    std::make_shared<const k8s::FieldMask>(k8s::FieldMask::keepNone().keep({"metadata", "name"}));

std::string targetName(int i) { return "t-" + std::to_string(i); }

std::string stsName(const std::string& target, int shard) {
  return planner::statefulSetName(planner::TargetKind::Prometheus, target, shard);
}

// Everything of one namespace, listed once per check.
struct Snapshot {
  std::map<std::string, Json> targets;        // by name
  std::map<std::string, Json> shard_sets;     // by name
  std::map<std::string, Json> stateful_sets;  // by name
};

Snapshot snapshot(const std::string& ns) {
  Snapshot s;
  auto into = [&](const k8s::Resource& r, std::map<std::string, Json>& out) {
    auto list = k8s::listAll(adminClient(), r, ns);
    if (!list) throw std::runtime_error("list " + r.describe() + ": " + list.error().describe());
    for (Json& item : (*list)["items"]) {
      const Json name = item.value("metadata", Json::object()).value("name", Json());
      if (!name.is_string()) {
        throw std::runtime_error("list " + r.describe() +
                                 ": an item without a name: " + item.dump().substr(0, 2000));
      }
      out[name.get<std::string>()] = std::move(item);
    }
  };
  into(kPrometheuses, s.targets);
  into(kShardSets, s.shard_sets);
  into(k8s::resources::statefulSets(), s.stateful_sets);
  return s;
}

// Why target i is not settled at `active` shards (and `active`..kShards-1 retained), or "".
std::string unsettled(const Snapshot& s, int i, int active) {
  const std::string name = targetName(i);
  auto t = s.targets.find(name);
  auto ss = s.shard_sets.find(name);
  if (t == s.targets.end() || ss == s.shard_sets.end()) return name + ": missing";
  const Json& spec = t->second["spec"];
  const Json& annotations = t->second["metadata"].value("annotations", Json::object());
  if (spec.value("shards", -1) != active || spec.value("paused", false)) {
    return name + ": target spec " + spec.dump();
  }
  if (annotations.value(std::string(api::kClaimedByAnnotation), "") != name ||
      annotations.contains(std::string(api::kPausedByAnnotation))) {
    return name + ": target annotations " + annotations.dump();
  }
  const Json& status = ss->second.value("status", Json::object());
  if (status.value("observedGeneration", -1) != ss->second["metadata"].value("generation", -2) ||
      status.value("shards", -1) != active || status.value("targetShards", -1) != active) {
    return name + ": ShardSet status " + status.dump();
  }
  std::vector<std::string> active_names;
  active_names.reserve(static_cast<size_t>(active));
  for (int k = 0; k < active; ++k) active_names.push_back(stsName(name, k));
  if (status.value("selector", "") != planner::activeShardPodSelector(name, active_names)) {
    return name + ": selector " + status.value("selector", "");
  }
  std::set<int> retained;
  for (const Json& r : status.value("retainedShards", Json::array())) {
    retained.insert(r.value("index", -1));
  }
  std::set<int> want_retained;
  for (int k = active; k < kShards; ++k) want_retained.insert(k);
  if (retained != want_retained) return name + ": retainedShards " + status.dump();
  bool ready = false;
  for (const Json& c : status.value("conditions", Json::array())) {
    if (c.value("type", "") == planner::kConditionReady) ready = c.value("status", "") == "True";
  }
  if (!ready) return name + ": not Ready: " + status.dump();
  for (int k = 0; k < kShards; ++k) {
    auto sts = s.stateful_sets.find(stsName(name, k));
    if (sts == s.stateful_sets.end()) return stsName(name, k) + ": missing";
    const Json& meta = sts->second["metadata"];
    const Json& labels = meta.value("labels", Json::object());
    if (labels.value(std::string(api::kShardSetLabel), "") != name) {
      return stsName(name, k) + ": no guard label: " + labels.dump();
    }
    const bool attached = labels.contains(std::string(api::kOperatorNameLabel));
    const bool annotated = meta.value("annotations", Json::object())
                               .contains(std::string(api::kDeletionTimestampAnnotation));
    if (attached != (k < active) || annotated == (k < active) ||
        meta.contains("deletionTimestamp")) {
      return stsName(name, k) + ": attached=" + std::to_string(attached) +
             " annotated=" + std::to_string(annotated);
    }
  }
  return "";
}

// The LIST requests a shardscaler process has sent, from its request counter.
int listRequests(const ShardscalerProcess& p) {
  return static_cast<int>(
      metricSum(p, "shardscaler_kube_requests_total", R"(verb="list")").value_or(0));
}

class ScaleManyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns_ = createNamespace("many");
    const auto logs = testLogDir();
    emulator_ = std::make_unique<testenv::OperatorEmulator>(
        testenv::OperatorEmulatorOptions{.kubeconfig = cluster().kubeconfigPath(),
                                         .namespaces = {ns_},
                                         .work_dir = logs / "emulator"});
    shardscaler_ = std::make_unique<ShardscalerProcess>(
        ShardscalerOptions{.kubeconfig = cluster().kubeconfigPath(),
                           .namespaces = {ns_},
                           .log_file = logs / "shardscaler.log"});
  }

  // Waits until every target i has the shard count want(i) and the state that goes with it.
  // Each look lists the whole namespace, so it looks every 2 s rather than every kPoll: the API
  // server's CPU is shardscaler's and the emulator's too.
  ::testing::AssertionResult waitSettled(const std::function<int(int)>& want,
                                         std::chrono::seconds limit) {
    std::string seen;
    const bool settled = test_kit::eventually(
        limit, 2s,
        [&](std::string* state) {
          Snapshot s = snapshot(ns_);
          int pending = 0;
          std::string first;
          for (int i = 0; i < kTargets; ++i) {
            std::string why = unsettled(s, i, want(i));
            if (!why.empty() && pending++ == 0) first = why;
          }
          if (pending == 0) return true;
          *state = std::to_string(pending) + " of " + std::to_string(kTargets) +
                   " not settled; first: " + first;
          return false;
        },
        &seen);
    if (settled) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "after " << limit.count() << " s: " << seen << "\n"
                                         << shardscaler_->logTail();
  }

  std::string ns_;
  std::unique_ptr<testenv::OperatorEmulator> emulator_;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
};

TEST_F(ScaleManyTest, HundredShardSetsConvergeAndTransitionsStayTheirOwn) {
  std::string targets;
  std::string shard_sets;
  for (int i = 0; i < kTargets; ++i) {
    targets += "---\napiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: " +
               targetName(i) + ", namespace: " + ns_ +
               "}\nspec: {shards: " + std::to_string(kShards) + ", replicas: 0}\n";
    shard_sets += "---\n" + shardSetYaml(ns_, targetName(i),
                                         {.target_name = targetName(i),
                                          .shards = kShards,
                                          .when_scaled = "Retain",
                                          .retention_period = "1h"});
  }
  apply(targets);
  // Names only (PartialObjectMetadata), once a second: the emulator needs the CPU.
  ASSERT_TRUE(test_kit::eventually(600s, 1s, [&](std::string* seen) {
    auto list = k8s::listAll(adminClient(), k8s::resources::statefulSets(), ns_,
                             {.metadata_only = true, .fields = kNamesOnly});
    const size_t n = list ? (*list)["items"].size() : 0;
    *seen = std::to_string(n) + " StatefulSets";
    return n == static_cast<size_t>(kTargets) * kShards;
  })) << "the emulator did not create the 1,000 StatefulSets";

  apply(shard_sets);
  ASSERT_TRUE(waitSettled([](int) { return kShards; }, 600s));
  std::set<std::string> uids;
  for (const auto& [name, sts] : snapshot(ns_).stateful_sets) {
    uids.insert(sts["metadata"]["uid"].get<std::string>());
  }
  ASSERT_EQ(uids.size(), static_cast<size_t>(kTargets * kShards));

  // Three ShardSets scale down in the loaded namespace: they keep their removed shards, and
  // no other ShardSet, target or StatefulSet moves.
  const std::map<int, int> scaled = {{7, 7}, {42, 5}, {99, 9}};
  for (const auto& [i, shards] : scaled) {
    auto r = kubectl("scale shardset/" + targetName(i) + " -n " + ns_ +
                     " --replicas=" + std::to_string(shards));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto want = [&](int i) { return scaled.contains(i) ? scaled.at(i) : kShards; };
  ASSERT_TRUE(waitSettled(want, 300s));

  std::set<std::string> uids_after;
  for (const auto& [name, sts] : snapshot(ns_).stateful_sets) {
    uids_after.insert(sts["metadata"]["uid"].get<std::string>());
  }
  EXPECT_EQ(uids_after, uids) << "a StatefulSet was deleted or replaced";
  for (const auto& a : emulator_->actions()) {
    EXPECT_FALSE(a.kind == "StatefulSet" && a.verb == "delete" && a.ok())
        << "the emulator deleted " << a.name;
  }

  // A new shardscaler over the settled namespace, every status cleared: each ShardSet, at rest,
  // is planned from the informer caches (docs/design/reads.md) and gets back the same status,
  // retained shards and all, without a list of its own.
  shardscaler_->terminate(15s);
  for (int i = 0; i < kTargets; ++i) {
    auto cleared =
        adminClient().patch(kShardSets, ns_, targetName(i), k8s::PatchType::Json,
                            Json::array({{{"op", "remove"}, {"path", "/status"}}}), "status");
    ASSERT_TRUE(cleared) << cleared.error().describe();
  }
  shardscaler_ = std::make_unique<ShardscalerProcess>(
      ShardscalerOptions{.kubeconfig = cluster().kubeconfigPath(),
                         .namespaces = {ns_},
                         .log_file = testLogDir() / "shardscaler-restarted.log"});
  ASSERT_TRUE(waitSettled(want, 300s));
  // The informers' lists (a page of 500 StatefulSets each) are all it lists: a reconcile that
  // read live would list its shards once at least, 100 lists for 100 ShardSets.
  EXPECT_LT(listRequests(*shardscaler_), kTargets / 4) << shardscaler_->logTail();

  // And back up: the retained shards are re-attached.
  for (const auto& [i, shards] : scaled) {
    auto r = kubectl("scale shardset/" + targetName(i) + " -n " + ns_ + " --replicas=10");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_TRUE(waitSettled([](int) { return kShards; }, 300s));
}

}  // namespace
}  // namespace shardscaler::e2e
