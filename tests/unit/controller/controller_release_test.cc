// Letting go of a target: on deletion and on a move of spec.targetRef, whatever the caches show
// and however quickly the moves follow each other, no shard is left to garbage collection and no
// target is left claimed or paused.
#include "controller_fixture.h"
#include "shardscaler/api/shard_set.h"

namespace shardscaler::controller::testing {
namespace {

bool guardEnforced(const std::string&, std::string*) { return true; }

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

}  // namespace
}  // namespace shardscaler::controller::testing
