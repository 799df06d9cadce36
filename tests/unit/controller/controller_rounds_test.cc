// The read-plan-apply rounds: bounded by max_rounds, and a write refused because the world moved
// (409, 404, a uid that changed) is met by reading again and planning again, not by degrading.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>

#include "controller_fixture.h"

namespace shardscaler::controller::testing {
namespace {

std::string degradedReason(const Json& shard_set) {
  for (const Json& c : shard_set["status"].value("conditions", Json::array())) {
    if (c.value("type", "") == "Degraded") return c.value("reason", "");
  }
  return "";
}

bool hasConditionReason(const Json& shard_set, const std::string& reason) {
  for (const Json& c : shard_set["status"].value("conditions", Json::array())) {
    if (c.value("reason", "") == reason) return true;
  }
  return false;
}

TEST_F(ControllerTest, AReconcileStopsAfterMaxRoundsAndAsksToBeRequeued) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  // The claim meets a conflict: planning again would take a second round of writes.
  startController({.max_rounds = 1});
  fake_.failNext({.verb = Verb::Patch, .resource = "prometheuses"}, 1,
                 k8s::testing::statusError(409, "the object has been modified"));
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Requeue) << describe(fake_.calls());
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .resource = "prometheuses"}).size(), 1U);
  EXPECT_TRUE(fake_.calls({.verb = Verb::Patch, .resource = "statefulsets"}).empty())
      << describe(fake_.calls());
  EXPECT_TRUE(statusWrites().empty());

  // The next reconcile goes on where this one stopped: the claim and the guard labels.
  EXPECT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .resource = "prometheuses"}).size(), 1U)
      << describe(fake_.calls());
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .resource = "statefulsets"}).size(), 2U);
}

std::vector<std::string> statefulSetListSelectors(const std::vector<k8s::testing::Call>& calls) {
  std::vector<std::string> selectors;
  for (const auto& call : calls) {
    if (call.verb == Verb::List && call.resource.resource == "statefulsets") {
      selectors.push_back(call.label_selector);
    }
  }
  return selectors;
}

// Each list of StatefulSets costs the API server a pass over the namespace's: once every shard
// carries the guard label, a reconcile reads them by that label alone. A first claim, whose
// shards carry none yet, reads them by the operator's name label alone: an unclaimed target has
// no shard of ours the guard list would add. A claimed target with a shard the caches show
// without our label gets both lists at once.
TEST_F(ControllerTest, OnceEveryShardIsLabelledAReconcileListsTheShardsByTheGuardLabelAlone) {
  const Json t = putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  EXPECT_EQ(statefulSetListSelectors(fake_.calls()),
            std::vector<std::string>{"operator.prometheus.io/name=main"})
      << describe(fake_.calls());

  // A live read now (the plan at rest comes from the caches; `shardscaler plan` reads live),
  // once the caches hold the labels.
  ASSERT_TRUE(fake_.awaitWatchesDelivered(kWatches));
  fake_.clearCalls();
  ASSERT_TRUE(controller_->dryRun(kNs, "main", std::nullopt)) << describe(fake_.calls());
  EXPECT_EQ(statefulSetListSelectors(fake_.calls()),
            std::vector<std::string>{"shardscaler.io/shardset=main"})
      << describe(fake_.calls());
  // A plan reads only the shards' metadata (PartialObjectMetadata), never their pod templates.
  for (const auto& call : fake_.calls({.verb = Verb::List, .resource = "statefulsets"})) {
    EXPECT_TRUE(call.list_options.metadata_only) << call.label_selector;
  }

  // The target grows to 3 shards and the operator creates shard 2; once the caches show it,
  // unlabelled, both lists go at once, the guard list without what the name list returns.
  ASSERT_TRUE(fake_.patch(planner::targetResource(planner::TargetKind::Prometheus), kNs, "main",
                          k8s::PatchType::Merge, Json{{"spec", {{"shards", 3}}}}));
  fake_.put(k8s::resources::statefulSets(), statefulSetJson(2, t["metadata"]["uid"]));
  ASSERT_TRUE(fake_.awaitWatchesDelivered(kWatches));
  fake_.clearCalls();
  ASSERT_TRUE(controller_->dryRun(kNs, "main", std::nullopt)) << describe(fake_.calls());
  EXPECT_THAT(statefulSetListSelectors(fake_.calls()),
              ::testing::UnorderedElementsAre(
                  "operator.prometheus.io/name=main",
                  "shardscaler.io/shardset=main,operator.prometheus.io/name!=main"))
      << describe(fake_.calls());
}

// Our caches can trail the API server: a shard the operator creates just as we read is not in
// them, and it carries no guard label yet. The target's spec.shards counts it, so the lists
// without it lack an active shard, and the name list is read after all.
TEST_F(ControllerTest, AShardOurCachesHaveNotSeenIsStillReadWhenTheTargetCountsIt) {
  const Json t = putTarget(3, 2);
  fake_.put(api::shardSets(), shardSetJson(3));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());

  // The operator creates shard 2 as the next live read's first list is served (a live read
  // as `shardscaler plan` makes it; the reconciles at rest plan from the caches).
  std::atomic<bool> created{false};
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::List || call.resource.resource != "statefulsets") return;
    if (created.exchange(true)) return;
    fake_.put(k8s::resources::statefulSets(), statefulSetJson(2, t["metadata"]["uid"]));
  });
  ASSERT_TRUE(fake_.awaitWatchesDelivered(kWatches));  // the caches hold the claim and labels
  fake_.clearCalls();
  auto plan = controller_->dryRun(kNs, "main", std::nullopt);
  fake_.setBeforeCall({});
  ASSERT_TRUE(plan) << plan.error().describe();
  const auto selectors = statefulSetListSelectors(fake_.calls());
  ASSERT_GE(selectors.size(), 2U) << describe(fake_.calls());
  EXPECT_EQ(selectors[0], "shardscaler.io/shardset=main") << describe(fake_.calls());
  EXPECT_EQ(selectors[1], "operator.prometheus.io/name=main") << describe(fake_.calls());
  EXPECT_THAT(planner::describe(*plan), ::testing::HasSubstr("guard shard 2"));

  // Once our caches hold it without our label, the reconcile reads live and labels it.
  const ReconcileOutcome outcome = reconcileToStatus();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  const auto sts = fake_.find(k8s::resources::statefulSets(), kNs, shardName(2));
  ASSERT_TRUE(sts);
  EXPECT_EQ((*sts)["metadata"]["labels"].value("shardscaler.io/shardset", ""), "main")
      << sts->dump();
  EXPECT_EQ((*shardSet())["status"].value("shards", 0), 3) << shardSet()->dump();
}

// The guard matters only to a transition. The steady state never reads it; a scale (a spec its
// status has not seen) reads it beside the target rather than after it, once per reconcile.
TEST_F(ControllerTest, AScaleReadsTheGuardBesideTheTargetAndTheSteadyStateNever) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  std::mutex mutex;
  std::condition_variable read_started;
  int guard_reads = 0;
  startController({.guard_enforced = [&](const std::string&, std::string*) {
    std::lock_guard lock(mutex);
    ++guard_reads;
    read_started.notify_all();
    return true;
  }});
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(guard_reads, 0) << "the steady state read the guard";
  }

  ASSERT_TRUE(fake_.patch(api::shardSets(), kNs, "main", k8s::PatchType::Merge,
                          Json{{"spec", {{"shards", 1}}}}));
  // The target's read is held until the guard's has started (at most 5 s): read after the
  // target, as before, the guard would start only once this gave up.
  std::atomic<bool> first_target_read{true};
  std::atomic<bool> started_beside{false};
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::Get || call.resource.resource != "prometheuses") return;
    if (!first_target_read.exchange(false)) return;  // a later round's
    std::unique_lock lock(mutex);
    started_beside =
        read_started.wait_for(lock, std::chrono::seconds(5), [&] { return guard_reads > 0; });
  });
  const ReconcileOutcome outcome = reconcile();
  fake_.setBeforeCall({});
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  EXPECT_TRUE(started_beside);
  std::lock_guard lock(mutex);
  EXPECT_EQ(guard_reads, 1) << describe(fake_.calls());
  EXPECT_EQ((*target())["spec"].value("shards", 0), 1) << target()->dump();
}

TEST_F(ControllerTest, AConflictOnATargetWriteIsReadAgainAndPlannedAgain) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  fake_.failNext({.verb = Verb::Patch, .resource = "prometheuses"}, 1,
                 k8s::testing::statusError(409, "the object has been modified"));
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;

  // patch (409), then a read of the target before the same claim is sent again.
  const auto calls = fake_.calls({.resource = "prometheuses"});
  ASSERT_EQ(reconcileToStatus().result, k8s::ReconcileResult::Success);
  ASSERT_GE(calls.size(), 4U) << describe(calls);
  std::vector<std::size_t> patches;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].verb == Verb::Patch) patches.push_back(i);
  }
  ASSERT_EQ(patches.size(), 2U) << describe(calls);
  EXPECT_TRUE(calls[patches[0]].error);
  EXPECT_FALSE(calls[patches[1]].error);
  bool read_between = false;
  for (std::size_t i = patches[0] + 1; i < patches[1]; ++i) {
    read_between = read_between || calls[i].verb == Verb::Get;
  }
  EXPECT_TRUE(read_between) << describe(calls);
  EXPECT_EQ((*target())["metadata"]["annotations"].value("shardscaler.io/claimed-by", ""), "main");
  EXPECT_EQ(degradedReason(*shardSet()), "AsExpected") << shardSet()->dump();
  EXPECT_FALSE(events_.has("ApplyFailed"));
}

TEST_F(ControllerTest, ANotFoundOnAShardWriteIsPlannedAgain) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  fake_.failNext({.verb = Verb::Patch, .resource = "statefulsets", .name = shardName(1)}, 1,
                 k8s::testing::statusError(404, "statefulsets.apps \"x\" not found"));
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .name = shardName(1)}).size(), 2U)
      << describe(fake_.calls());
  ASSERT_EQ(reconcileToStatus().result, k8s::ReconcileResult::Success);
  EXPECT_EQ(degradedReason(*shardSet()), "AsExpected") << shardSet()->dump();
}

TEST_F(ControllerTest, AMissingTargetIsReportedAndNothingIsDeleted) {
  putTarget(2);  // the shards of `main` exist; the ShardSet names another target
  fake_.put(api::shardSets(), shardSetJson(2, "absent"));
  startController();
  const ReconcileOutcome outcome = reconcile();
  EXPECT_NE(outcome.result, k8s::ReconcileResult::Error) << outcome.error;
  ASSERT_TRUE(shardSet()->contains("status")) << describe(fake_.calls());
  EXPECT_TRUE(hasConditionReason(*shardSet(), "TargetNotFound")) << shardSet()->dump();
  EXPECT_TRUE(fake_.calls({.verb = Verb::Remove}).empty()) << describe(fake_.calls());
  EXPECT_TRUE(fake_.calls({.verb = Verb::Patch, .resource = "statefulsets"}).empty());
  EXPECT_TRUE(fake_.calls({.verb = Verb::Patch, .resource = "prometheuses"}).empty());
}

TEST_F(ControllerTest, TargetPatchesCarryUidAndResourceVersionAndARecreatedTargetIsReplanned) {
  const Json old_target = putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  // The target is deleted and created again (a new uid) just before the claim arrives.
  std::atomic<bool> replaced{false};
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::Patch || call.resource.resource != "prometheuses") return;
    if (replaced.exchange(true)) return;
    fake_.erase(planner::targetResource(planner::TargetKind::Prometheus), kNs, "main");
    fake_.put(planner::targetResource(planner::TargetKind::Prometheus), prometheusJson(2));
  });
  const ReconcileOutcome outcome = reconcile();
  fake_.setBeforeCall({});
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;

  const auto patches = fake_.calls({.verb = Verb::Patch, .resource = "prometheuses"});
  ASSERT_EQ(patches.size(), 2U) << describe(fake_.calls());
  EXPECT_EQ(patches[0].body["metadata"]["uid"], old_target["metadata"]["uid"]);
  EXPECT_EQ(patches[0].body["metadata"]["resourceVersion"],
            old_target["metadata"]["resourceVersion"]);
  ASSERT_TRUE(patches[0].error);
  // The resourceVersion precondition is checked first (as by the API server).
  EXPECT_EQ(patches[0].error->kind, k8s::ErrorKind::Conflict);
  const Json now = *target();
  EXPECT_EQ(patches[1].body["metadata"]["uid"], now["metadata"]["uid"]);
  EXPECT_NE(now["metadata"]["uid"], old_target["metadata"]["uid"]);
  EXPECT_FALSE(patches[1].error);
  EXPECT_EQ(now["metadata"]["annotations"].value("shardscaler.io/claimed-by", ""), "main");
  // The shard patches name their StatefulSet by uid too.
  for (const auto& p : fake_.calls({.verb = Verb::Patch, .resource = "statefulsets"})) {
    const auto sts = fake_.find(k8s::resources::statefulSets(), kNs, p.name);
    ASSERT_TRUE(sts);
    EXPECT_EQ(p.body["metadata"]["uid"], (*sts)["metadata"]["uid"]) << p.body.dump();
  }
}

TEST_F(ControllerTest, AShardRecreatedUnderItsGuardLabelPatchIsReplannedNotDegraded) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  // The label patch carries only the uid: a new StatefulSet of the same name fails it as 422.
  std::atomic<bool> replaced{false};
  std::string old_uid;
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::Patch || call.name != shardName(1)) return;
    if (replaced.exchange(true)) return;
    old_uid = (*fake_.find(k8s::resources::statefulSets(), kNs, shardName(1)))["metadata"]["uid"];
    fake_.erase(k8s::resources::statefulSets(), kNs, shardName(1));
    fake_.put(k8s::resources::statefulSets(),
              statefulSetJson(1, (*target())["metadata"]["uid"].get<std::string>()));
  });
  const ReconcileOutcome outcome = reconcile();
  fake_.setBeforeCall({});
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  const auto patches = fake_.calls({.verb = Verb::Patch, .name = shardName(1)});
  ASSERT_EQ(patches.size(), 2U) << describe(fake_.calls());
  EXPECT_EQ(patches[0].body["metadata"]["uid"], old_uid);
  ASSERT_TRUE(patches[0].error);
  EXPECT_EQ(patches[0].error->kind, k8s::ErrorKind::Invalid) << patches[0].error->describe();
  const Json now = *fake_.find(k8s::resources::statefulSets(), kNs, shardName(1));
  EXPECT_EQ(patches[1].body["metadata"]["uid"], now["metadata"]["uid"]);
  EXPECT_EQ(now["metadata"]["labels"].value("shardscaler.io/shardset", ""), "main");
  ASSERT_EQ(reconcileToStatus().result, k8s::ReconcileResult::Success);
  EXPECT_EQ(degradedReason(*shardSet()), "AsExpected") << shardSet()->dump();
}

// A scale-down 3 -> 2 without the guard, interrupted after the detach of shard 2: lowering
// spec.shards is refused for good, so the transition is undone at the target's count, which
// re-attaches shard 2. That re-attach is refused for good too (as the API server's
// OwnerReferencesPermissionEnforcement refuses one without update on prometheuses/finalizers):
// the undo resumes the target without it rather than leave it paused, and shard 2 stays, retained.
TEST_F(ControllerTest, AReattachRefusedForGoodDoesNotLeaveTheTargetPaused) {
  Json t = test_objects::pausedBy(prometheusJson(3), "main");
  t["metadata"]["generation"] = 7;
  t["metadata"]["annotations"] = {{"shardscaler.io/claimed-by", "main"},
                                  {"shardscaler.io/paused-by", "main"},
                                  {"shardscaler.io/paused-at", "2019-12-19T23:58:00Z"}};
  t = fake_.put(planner::targetResource(planner::TargetKind::Prometheus), t);
  const std::string target_uid = t["metadata"]["uid"];
  Json ss = shardSetJson(2);
  ss["metadata"]["finalizers"] = {kFinalizer};
  ss["metadata"]["annotations"] = {{kBoundAnnotation, "Prometheus/main"}};
  const std::string shard_set_uid = fake_.put(api::shardSets(), ss)["metadata"]["uid"];
  for (int i = 0; i < 2; ++i) {
    Json sts = statefulSetJson(i, target_uid);
    sts["metadata"]["labels"]["shardscaler.io/shardset"] = "main";
    fake_.put(k8s::resources::statefulSets(), sts);
  }
  Json detached = test_objects::retainedShard(2, "2019-12-21T00:00:00Z",
                                              {.target_uid = target_uid,
                                               .uid_prefix = "",
                                               .resource_version_base = std::nullopt,
                                               .replicas = 1});
  detached["metadata"]["annotations"]["shardscaler.io/deletion-deadline"] = "2019-12-21T00:00:00Z";
  detached["metadata"]["annotations"]["shardscaler.io/detached-at"] = "2019-12-19T23:58:30Z";
  detached["metadata"]["ownerReferences"] = {{{"apiVersion", "shardscaler.io/v1alpha1"},
                                              {"kind", "ShardSet"},
                                              {"name", "main"},
                                              {"uid", shard_set_uid},
                                              {"controller", true}}};
  fake_.put(k8s::resources::statefulSets(), detached);
  startController();
  fake_.failNext({.verb = Verb::Patch, .resource = "prometheuses"}, 1,
                 k8s::testing::statusError(403,
                                           "prometheuses.monitoring.coreos.com \"main\" is "
                                           "forbidden: admission says no"));
  fake_.failNext({.verb = Verb::Patch, .resource = "statefulsets", .name = shardName(2)},
                 FakeKubeClient::kEveryCall,
                 k8s::testing::statusError(
                     403, "statefulsets.apps \"" + shardName(2) +
                              "\" is forbidden: cannot set blockOwnerDeletion if an "
                              "ownerReference refers to a resource you can't set finalizers on"));

  for (int attempt = 0; attempt < 3; ++attempt) {
    (void)reconcile();
    if (!(*target())["spec"].value("paused", false)) break;
  }
  const Json after = *target();
  EXPECT_FALSE(after["spec"].value("paused", false)) << "left paused: " << after.dump() << "\n"
                                                     << describe(fake_.calls());
  EXPECT_FALSE(after["metadata"]["annotations"].contains("shardscaler.io/paused-by"));
  EXPECT_EQ(after["spec"].value("shards", 0), 3) << "an undo keeps the target's count";
  const auto kept = fake_.find(k8s::resources::statefulSets(), kNs, shardName(2));
  ASSERT_TRUE(kept) << "shard 2 was deleted";
  EXPECT_EQ((*kept)["metadata"]["labels"].value("shardscaler.io/retained", ""), "true");
  EXPECT_TRUE(fake_.calls({.verb = Verb::Remove}).empty());
  EXPECT_EQ(degradedReason(*shardSet()), "ApplyFailed") << shardSet()->dump();
}

}  // namespace
}  // namespace shardscaler::controller::testing
