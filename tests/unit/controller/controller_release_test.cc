// Letting go of a target: on deletion and on a move of spec.targetRef, whatever the caches show
// and however quickly the moves follow each other, no shard is left to garbage collection and no
// target is left claimed or paused.
#include <atomic>

#include "controller_fixture.h"
#include "shardscaler/api/shard_set.h"

namespace shardscaler::controller::testing {
namespace controller_release_test {
namespace {

const k8s::Resource kPrometheuses = planner::targetResource(planner::TargetKind::Prometheus);

bool guardEnforced(const std::string&, std::string*) { return true; }

// The Prometheus `name` with `shards` shards, as the operator leaves it: unclaimed, each shard
// owned by it and without our guard label.
Json putNamedTarget(FakeKubeClient& fake, const std::string& name, int shards) {
  Json target = fake.put(kPrometheuses, test_objects::targetJson(shards, Json::object(),
                                                                 {.name = name,
                                                                  .uid = "",
                                                                  .resource_version = "",
                                                                  .generation = std::nullopt,
                                                                  .claimed_by = "",
                                                                  .replicas = 1}));
  for (int i = 0; i < shards; ++i) {
    fake.put(
        k8s::resources::statefulSets(),
        test_objects::attachedShard(i, {.target_name = name,
                                        .target_uid = target["metadata"]["uid"].get<std::string>(),
                                        .guard_label = false,
                                        .uid_prefix = "",
                                        .resource_version_base = std::nullopt,
                                        .replicas = 1}));
  }
  return target;
}

std::string annotationOf(const Json& object, const std::string& key) {
  return object["metadata"].value("annotations", Json::object()).value(key, "");
}

bool ownedBy(const Json& object, const std::string& uid) {
  for (const Json& ref : object["metadata"].value("ownerReferences", Json::array())) {
    if (ref.value("uid", "") == uid) return true;
  }
  return false;
}

// A release round detached a shard (the undo keeps one it exposed above the target's count) and
// dropped the claim; the next round's caches show the claim gone (the target informer kept up)
// but not the detach (the StatefulSet informer trails). That round reads live, finds the shard it
// just detached and drops the ShardSet's owner reference before the finalizer goes: else garbage
// collection would follow that reference to the deleted ShardSet and take the shard.
TEST_F(ControllerTest, AReleaseFindsTheShardItJustDetachedWhateverTheCachesShow) {
  const Json target = putTarget(2);
  const std::string target_uid = target["metadata"]["uid"];
  Json deleted = shardSetJson(2);
  deleted["metadata"]["finalizers"] = {kFinalizer};
  deleted["metadata"]["annotations"] = {{kBoundAnnotation, "Prometheus/main"}};
  deleted["metadata"]["deletionTimestamp"] = "2019-12-20T00:00:00Z";
  const std::string shard_set_uid = fake_.put(api::shardSets(), deleted)["metadata"]["uid"];
  // Shard 2 as the caches last saw it: attached, above the count, with our label.
  Json exposed = statefulSetJson(2, target_uid);
  exposed["metadata"]["labels"]["shardscaler.io/shardset"] = "main";
  exposed = fake_.put(k8s::resources::statefulSets(), exposed);
  startController({.guard_enforced = guardEnforced});

  fake_.holdWatches(k8s::resources::statefulSets());
  Json detached = test_objects::retainedShard(2, "",
                                              {.target_uid = target_uid,
                                               .guard_label = true,
                                               .uid_prefix = "",
                                               .resource_version_base = std::nullopt,
                                               .replicas = 1});
  detached["metadata"]["uid"] = exposed["metadata"]["uid"];
  detached["metadata"]["annotations"]["shardscaler.io/deletion-deadline"] = "2019-12-21T00:00:00Z";
  detached["metadata"]["ownerReferences"] = {{{"apiVersion", std::string(api::kApiVersion)},
                                              {"kind", std::string(api::kShardSetKind)},
                                              {"name", "main"},
                                              {"uid", shard_set_uid},
                                              {"controller", true}}};
  fake_.put(k8s::resources::statefulSets(), detached);

  for (int attempt = 0; attempt < 3 && shardSet(); ++attempt) {
    const ReconcileOutcome outcome = reconcile();
    ASSERT_NE(outcome.result, k8s::ReconcileResult::Error) << outcome.error << "\n"
                                                           << describe(fake_.calls());
  }
  const auto shard = fake_.find(k8s::resources::statefulSets(), kNs, shardName(2));
  ASSERT_TRUE(shard) << "a shard was deleted";
  EXPECT_FALSE(ownedBy(*shard, shard_set_uid))
      << "the ShardSet's owner reference outlives it: " << shard->dump() << "\n"
      << describe(fake_.calls());
  bool named = false;
  for (const auto& event : events_.recorded()) {
    if (event.reason == "RetainedShardsOrphaned" &&
        event.message.find(shardName(2)) != std::string::npos) {
      named = true;
    }
  }
  EXPECT_TRUE(named) << "no RetainedShardsOrphaned Event names " << shardName(2);
  fake_.releaseWatches(k8s::resources::statefulSets());
}

// A foreground deletion puts the garbage collector's finalizer beside ours: the release orphans
// the retained shard all the same and removes only its own finalizer.
TEST_F(ControllerTest, AForegroundDeletionIsReleasedAndKeepsTheCollectorsFinalizer) {
  const Json target = putTarget(1);
  Json deleted = shardSetJson(1);
  deleted["metadata"]["finalizers"] = {"foregroundDeletion", kFinalizer};
  deleted["metadata"]["annotations"] = {{kBoundAnnotation, "Prometheus/main"}};
  deleted["metadata"]["deletionTimestamp"] = "2019-12-20T00:00:00Z";
  const std::string shard_set_uid = fake_.put(api::shardSets(), deleted)["metadata"]["uid"];
  Json retained = test_objects::retainedShard(1, "2019-12-21T00:00:00Z",
                                              {.target_uid = target["metadata"]["uid"],
                                               .uid_prefix = "",
                                               .resource_version_base = std::nullopt,
                                               .replicas = 1});
  retained["metadata"]["annotations"]["shardscaler.io/deletion-deadline"] = "2019-12-21T00:00:00Z";
  retained["metadata"]["ownerReferences"] = {{{"apiVersion", std::string(api::kApiVersion)},
                                              {"kind", std::string(api::kShardSetKind)},
                                              {"name", "main"},
                                              {"uid", shard_set_uid},
                                              {"controller", true}}};
  fake_.put(k8s::resources::statefulSets(), retained);
  startController({.guard_enforced = guardEnforced});

  const ReconcileOutcome outcome = reconcile();
  ASSERT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error << "\n"
                                                           << describe(fake_.calls());
  ASSERT_TRUE(shardSet()) << "the collector's finalizer keeps it";
  EXPECT_EQ((*shardSet())["metadata"]["finalizers"], Json::array({"foregroundDeletion"}));
  const auto shard = fake_.find(k8s::resources::statefulSets(), kNs, shardName(1));
  ASSERT_TRUE(shard);
  EXPECT_FALSE(ownedBy(*shard, shard_set_uid)) << shard->dump();
  EXPECT_TRUE(events_.has("RetainedShardsOrphaned"));
}

// spec.targetRef moves to b, and before a reconcile confirms that claim it moves on to c; the
// reconcile in between paused b for a transition and stopped (a conflict, then a failed read).
// The second move must still let go of b: resumed, its claim dropped.
TEST_F(ControllerTest, ATargetClaimedBetweenTwoQuickMovesIsLetGo) {
  putNamedTarget(fake_, "a", 2);
  putNamedTarget(fake_, "b", 2);
  putNamedTarget(fake_, "c", 2);
  fake_.put(api::shardSets(),
            test_objects::shardSetJson(2, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}},
                                       {.target_name = "a", .generation = {}}));
  startController({.guard_enforced = guardEnforced});
  ASSERT_EQ(reconcileToStatus().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  ASSERT_EQ(annotationOf(*fake_.find(kPrometheuses, kNs, "a"), "shardscaler.io/claimed-by"),
            "main");

  auto moveTo = [&](const std::string& name, Json spec = Json::object()) {
    spec["targetRef"] = {{"name", name}};
    ASSERT_TRUE(
        fake_.patch(api::shardSets(), kNs, "main", k8s::PatchType::Merge, Json{{"spec", spec}}));
  };
  // To b, with one shard fewer: the claim, and the reconcile ends there.
  moveTo("b", {{"shards", 1}});
  const ReconcileOutcome claimed = reconcile();
  ASSERT_EQ(claimed.result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  ASSERT_EQ(annotationOf(*fake_.find(kPrometheuses, kNs, "b"), "shardscaler.io/claimed-by"),
            "main");

  // The next one pauses b; its detach meets a conflict, and the read after it fails.
  std::atomic<bool> injected{false};
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb == Verb::Patch && call.resource.resource == "statefulsets" &&
        !injected.exchange(true)) {
      fake_.failNext({.verb = Verb::Get, .resource = "prometheuses"}, 1,
                     k8s::testing::statusError(500, "etcd is away"));
    }
  });
  fake_.failNext({.verb = Verb::Patch, .resource = "statefulsets"}, 1,
                 k8s::testing::statusError(409, "the object has been modified"));
  EXPECT_EQ(reconcile().result, k8s::ReconcileResult::Error) << describe(fake_.calls());
  fake_.setBeforeCall({});
  ASSERT_TRUE(injected);
  ASSERT_EQ(annotationOf(*fake_.find(kPrometheuses, kNs, "b"), "shardscaler.io/paused-by"), "main");

  moveTo("c");
  for (int attempt = 0; attempt < 3; ++attempt) {
    const ReconcileOutcome outcome = reconcile();
    ASSERT_NE(outcome.result, k8s::ReconcileResult::Error) << outcome.error << "\n"
                                                           << describe(fake_.calls());
    if (!outcome.requeue_after) break;
  }
  const Json b = *fake_.find(kPrometheuses, kNs, "b");
  EXPECT_FALSE(b["spec"].value("paused", false)) << "b was left paused: " << b.dump();
  EXPECT_EQ(annotationOf(b, "shardscaler.io/claimed-by"), "") << "b was left claimed: " << b.dump();
  EXPECT_EQ(annotationOf(b, "shardscaler.io/paused-by"), "") << b.dump();
  EXPECT_EQ(annotationOf(*fake_.find(kPrometheuses, kNs, "c"), "shardscaler.io/claimed-by"),
            "main");
  EXPECT_EQ(annotationOf(*shardSet(), "shardscaler.io/target"), "Prometheus/c");
}

}  // namespace
}  // namespace controller_release_test
}  // namespace shardscaler::controller::testing
