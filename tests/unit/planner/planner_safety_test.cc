// The planner against an operator whose view lags: the fallback's gates (pause acknowledged,
// settle times), claims on the target, releasing a target, and undoing after a refused write.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::planner {
namespace {

using namespace testing;  // fixtures
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kFuture = "2026-11-25T10:00:00Z";

Json retain3d() { return retainPolicy("Retain", "3d"); }

// Paused by us at `at`; the operator's status says paused for the current generation when
// `acknowledged`.
Json pausedAt(Json target, const std::string& at, bool acknowledged = true) {
  target = pausedBy(std::move(target), "main");
  target["metadata"]["annotations"]["shardscaler.io/paused-at"] = at;
  if (!acknowledged) target["status"]["paused"] = false;
  return target;
}

Json detachedAt(Json sts, const std::string& at) {
  sts["metadata"]["annotations"]["shardscaler.io/detached-at"] = at;
  return sts;
}

World fallback(World w) {
  w.guarded = false;
  return w;
}

// ---- without the guard -------------------------------------------------------------------

TEST(Fallback, ScaleDownFirstOnlyPausesAndWaitsForTheOperator) {
  const Plan plan = planShardSet(
      fallback({shardSetJson(3, retain3d()), targetJson(5), attachedShards(0, 5)}).input());
  EXPECT_THAT(steps(plan), ElementsAre("pause"));
  EXPECT_EQ(plan.decision.waiting_for, "the operator to acknowledge the pause");
  EXPECT_EQ(plan.requeue_after, milliseconds(500));
  EXPECT_EQ(only(plan, ActionType::PauseTarget)
                .merge_patch["metadata"]["annotations"]["shardscaler.io/paused-at"],
            "2026-11-22T10:00:00Z");
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, "ScalingDown");
  EXPECT_THAT(condition(plan, kConditionProgressing).message,
              HasSubstr("waiting for the operator to acknowledge the pause"));
}

TEST(Fallback, NothingIsDetachedUntilThePauseIsAcknowledged) {
  const Plan plan = planShardSet(
      fallback({shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:50Z", false),
                attachedShards(0, 5)})
          .input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.decision.waiting_for, "the operator to acknowledge the pause");
  EXPECT_EQ(plan.requeue_after, milliseconds(500));
  EXPECT_EQ(condition(plan, kConditionReady).reason, "Scaling");
}

TEST(Fallback, AStatusOfAnOlderGenerationIsNoAcknowledgement) {
  Json target = pausedAt(targetJson(5), "2026-11-22T09:59:50Z");
  target["metadata"]["generation"] = 8;  // the pause bumped it; the status says 7
  const Plan plan =
      planShardSet(fallback({shardSetJson(3, retain3d()), target, attachedShards(0, 5)}).input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.decision.waiting_for, "the operator to acknowledge the pause");
}

TEST(Fallback, AcknowledgedPauseDetaches) {
  const Plan plan =
      planShardSet(fallback({shardSetJson(3, retain3d()),
                             pausedAt(targetJson(5), "2026-11-22T09:59:59Z"), attachedShards(0, 5)})
                       .input());
  EXPECT_THAT(steps(plan), ElementsAre("detach 3", "detach 4"));
}

TEST(Fallback, SpecShardsDropsOnlyAfterTheSettleTimeSinceTheLastDetach) {
  const auto world = [](const std::string& detached) {
    return fallback({shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:00Z"),
                     attachedShards(0, 3) +
                         std::vector{detachedAt(retainedShard(3, kFuture), "2026-11-22T09:59:00Z"),
                                     detachedAt(retainedShard(4, kFuture), detached)}});
  };
  const Plan settling = planShardSet(world("2026-11-22T09:59:57Z").input());
  EXPECT_TRUE(settling.actions.empty());
  EXPECT_EQ(settling.decision.waiting_for, "the settle time after the last detach");
  EXPECT_EQ(settling.requeue_after, seconds(7));

  const Plan settled = planShardSet(world("2026-11-22T09:59:50Z").input());
  EXPECT_THAT(steps(settled), ElementsAre("update shards=3 unpause"));
  EXPECT_EQ(only(settled, ActionType::UpdateTarget).resource_version, "1001");
}

TEST(Fallback, ARecentDetachHoldsNothingOnceTheCountIsLoweredAndTheTargetResumed) {
  const Plan plan = planShardSet(
      fallback({shardSetJson(3, retain3d()), targetJson(3),
                attachedShards(0, 3) +
                    std::vector{detachedAt(retainedShard(3, kFuture), "2026-11-22T09:59:57Z"),
                                detachedAt(retainedShard(4, kFuture), "2026-11-22T09:59:57Z")}})
          .input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.decision.waiting_for, "");
  EXPECT_EQ(condition(plan, kConditionReady).status, "True");
}

TEST(Fallback, ADetachTheOperatorUndidIsDoneAgainAndTheSettleTimeStartsOver) {
  Json relabelled = detachedAt(retainedShard(4, kFuture), "2026-11-22T09:59:00Z");
  relabelled["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
  const Plan plan = planShardSet(
      fallback({shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:58:00Z"),
                attachedShards(0, 3) +
                    std::vector{detachedAt(retainedShard(3, kFuture), "2026-11-22T09:59:00Z"),
                                relabelled}})
          .input());
  EXPECT_THAT(steps(plan), ElementsAre("detach 4"));  // no spec.shards write in the same plan
  EXPECT_EQ(only(plan, ActionType::DetachStatefulSet, 4)
                .merge_patch["metadata"]["annotations"]["shardscaler.io/detached-at"],
            "2026-11-22T10:00:00Z");
}

TEST(Fallback, ScaleUpReattachesOnlyAfterTheSettleTimeSinceThePause) {
  const auto world = [](const std::string& paused_at) {
    return fallback({shardSetJson(4, retain3d()), pausedAt(targetJson(3), paused_at),
                     attachedShards(0, 3) + std::vector{retainedShard(3, kFuture)}});
  };
  const Plan early = planShardSet(world("2026-11-22T09:59:58Z").input());
  EXPECT_TRUE(early.actions.empty());
  EXPECT_EQ(early.decision.waiting_for, "the settle time after the pause");
  EXPECT_EQ(early.requeue_after, seconds(8));
  EXPECT_THAT(steps(planShardSet(world("2026-11-22T09:59:49Z").input())),
              ElementsAre("reattach 3"));
}

TEST(Fallback, UnacknowledgedPauseIsUndoneAfterTheTimeout) {
  const Plan plan = planShardSet(
      fallback({shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:30Z", false),
                attachedShards(0, 5)})
          .input());
  EXPECT_THAT(steps(plan), ElementsAre("update unpause"));
  EXPECT_THAT(
      plan.decision.abandoned_because,
      HasSubstr("the operator did not acknowledge the pause of Prometheus main within 30s"));
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, "PauseNotAcknowledged");
  EXPECT_EQ(condition(plan, kConditionDegraded).reason, "PauseNotAcknowledged");
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, EventType::Warning);
  EXPECT_EQ(plan.events[0].reason, "PauseNotAcknowledged");
}

TEST(Fallback, AfterAnUnacknowledgedPauseNoPauseForTheTimeout) {
  Json ss = shardSetJson(3, retain3d());
  ss["status"]["conditions"] = {{{"type", "Progressing"},
                                 {"status", "False"},
                                 {"reason", "PauseNotAcknowledged"},
                                 {"message", "..."},
                                 {"lastTransitionTime", "2026-11-22T09:59:50Z"}}};
  const Plan held = planShardSet(fallback({ss, targetJson(5), attachedShards(0, 5)}).input());
  EXPECT_TRUE(held.actions.empty());
  EXPECT_EQ(held.requeue_after, seconds(20));
  EXPECT_EQ(condition(held, kConditionProgressing).reason, "PauseNotAcknowledged");

  ss["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-22T09:59:20Z";
  EXPECT_THAT(steps(planShardSet(fallback({ss, targetJson(5), attachedShards(0, 5)}).input())),
              ElementsAre("pause"));
}

TEST(Fallback, APauseWithoutATimeIsStampedBeforeAnythingElse) {
  const Plan plan =
      planShardSet(fallback({shardSetJson(4, retain3d()), pausedBy(targetJson(3), "main"),
                             attachedShards(0, 3) + std::vector{retainedShard(3, kFuture)}})
                       .input());
  EXPECT_THAT(steps(plan), ElementsAre("pause"));
}

TEST(Fallback, DeletePolicyScaleDownNeedsNoPause) {
  EXPECT_THAT(steps(planShardSet(fallback({shardSetJson(3, retainPolicy("Delete")), targetJson(5),
                                           attachedShards(0, 5)})
                                     .input())),
              ElementsAre("update shards=3"));
}

TEST(Guarded, NoWaitingAtAll) {
  // One plan: the API server refuses a stale operator's deletes and re-labels, so nothing needs
  // to be observed between the detaches and lowering spec.shards. The pause is conditional on the
  // observed resourceVersion; the update after it only on the uid (the operator's status write
  // acknowledging the pause changes the resourceVersion in between).
  World w{shardSetJson(3, retain3d()), targetJson(5), attachedShards(0, 5)};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan),
              ElementsAre("pause", "detach 3", "detach 4", "update shards=3 unpause any-rv"));
  EXPECT_EQ(plan.actions.front().merge_patch["metadata"]["resourceVersion"], "1001");
  EXPECT_FALSE(plan.actions.back().merge_patch["metadata"].contains("resourceVersion"));
  EXPECT_EQ(plan.actions.back().merge_patch["metadata"]["uid"], kTargetUid);
  // A plan cut short after the detaches (a crash) finishes from the next observation, with the
  // observed resourceVersion as its precondition.
  World next{shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:59Z", false),
             attachedShards(0, 3) +
                 std::vector{detachedAt(retainedShard(3, kFuture), "2026-11-22T09:59:59Z"),
                             detachedAt(retainedShard(4, kFuture), "2026-11-22T09:59:59Z")}};
  EXPECT_THAT(steps(planShardSet(next.input())), ElementsAre("update shards=3 unpause"));
}

// Found by the soak (hack/soak.sh): scaled up, then down before the operator created the new
// shards. Lowering spec.shards at once let the lagging operator create them from the count it
// last saw and then delete them as one too many. With shards below the target's count not yet
// seen, spec.shards drops only after an acknowledged pause and the settle time, guard or not.
// Under Delete too (found by the soak, guarded and fallback alike, Delete, 1 -> 2 -> 1 within
// 0.4 s): lowered at once, the count let a lagging operator create shard 1 after the ShardSet
// reported the scale-down done.
TEST(UnseenShards, LoweringWaitsForTheOperatorToSettleGuardOrNot) {
  for (const Json& policy : {retain3d(), retainPolicy("Delete", "3d")}) {
    const bool retain = policy == retain3d();
    for (const bool guarded : {true, false}) {
      SCOPED_TRACE(policy.dump() + (guarded ? " guarded" : " fallback"));
      World start{shardSetJson(2, policy), targetJson(5), attachedShards(0, 2)};
      start.guarded = guarded;
      const Plan first = planShardSet(start.input());
      EXPECT_THAT(steps(first), ElementsAre("pause"));
      EXPECT_EQ(first.decision.waiting_for, "the operator to acknowledge the pause");

      World acknowledged{shardSetJson(2, policy), pausedAt(targetJson(5), "2026-11-22T09:59:59Z"),
                         attachedShards(0, 2)};
      acknowledged.guarded = guarded;
      const Plan early = planShardSet(acknowledged.input());
      EXPECT_THAT(steps(early), ::testing::IsEmpty());
      EXPECT_EQ(early.decision.waiting_for, "the settle time after the pause");
      ASSERT_TRUE(early.requeue_after.has_value());
      EXPECT_EQ(*early.requeue_after, std::chrono::seconds(9));

      acknowledged.now += std::chrono::seconds(9);
      EXPECT_THAT(steps(planShardSet(acknowledged.input())),
                  ElementsAre("update shards=2 unpause"));

      // A shard the operator created meanwhile is detached first under Retain, as in any
      // scale-down; under Delete the operator deletes it once the count drops.
      World appeared = acknowledged;
      appeared.stateful_sets = attachedShards(0, 3);
      EXPECT_THAT(steps(planShardSet(appeared.input())),
                  ElementsAre(retain ? "detach 2" : "update shards=2 unpause"));
    }
  }
}

// Found by the soak (Delete policy, 3 -> 4 -> 3 -> 5 in two seconds): the operator created shard
// 3 for 4 shards; a sync it had started for 3 shards, before the pause, deleted that shard after
// spec.shards had gone up to 5. A shard the operator sees but does not expect keeps the target
// paused for the settle time before spec.shards rises, so that such a sync has ended while the
// shard was still one too many. The guard does not remove the wait (found by the soak, guarded,
// Delete, 1 -> 3 over an attached shard 1): it admitted the operator's DELETE while spec.shards
// was 1, and the raise to 3 committed before the deletion did.
TEST(UnexpectedShards, RaisingWaitsForTheSettleTimeGuardOrNot) {
  for (const Json& policy : {retain3d(), retainPolicy("Delete", "3d")}) {
    SCOPED_TRACE(policy.dump());
    for (const bool guard : {false, true}) {
      SCOPED_TRACE(guard ? "guarded" : "fallback");
      World paused{shardSetJson(5, policy), pausedAt(targetJson(3), "2026-11-22T09:59:59Z"),
                   attachedShards(0, 4)};
      paused.guarded = guard;
      const Plan early = planShardSet(paused.input());
      EXPECT_THAT(steps(early), ::testing::IsEmpty());
      EXPECT_EQ(early.decision.waiting_for, "the settle time after the pause");
      ASSERT_TRUE(early.requeue_after.has_value());
      EXPECT_EQ(*early.requeue_after, std::chrono::seconds(9));

      paused.now += std::chrono::seconds(9);
      EXPECT_THAT(steps(planShardSet(paused.input())), ElementsAre("update shards=5 unpause"));

      World unpaused{shardSetJson(5, policy), targetJson(3), attachedShards(0, 4)};
      unpaused.guarded = guard;
      const Plan first = planShardSet(unpaused.input());
      EXPECT_THAT(steps(first), ElementsAre("pause"));
      EXPECT_EQ(first.decision.waiting_for, "the operator to acknowledge the pause");
    }
  }
}

// Scaling down over shards that all exist is not held up with the guard.
TEST(UnseenShards, AllPresentNeedsNoWaitWithTheGuard) {
  World w{shardSetJson(2, retain3d()), targetJson(3), attachedShards(0, 3)};
  EXPECT_THAT(steps(planShardSet(w.input())),
              ElementsAre("pause", "detach 2", "update shards=2 unpause any-rv"));
}

// ---- the guard label ---------------------------------------------------------------------

TEST(GuardLabel, ActiveShardsWithoutItAreLabelled) {
  std::vector<Json> sts = attachedShards(0, 3);
  sts[1]["metadata"]["labels"].erase("shardscaler.io/shardset");
  const Plan plan = planShardSet(World{shardSetJson(3), targetJson(3), sts}.input());
  EXPECT_THAT(steps(plan), ElementsAre("label 1"));
  EXPECT_EQ(plan.actions[0].merge_patch, Json::parse(R"({"metadata": {"uid": "sts-uid-1",
                            "labels": {"shardscaler.io/shardset": "main"}}})"));
  EXPECT_EQ(condition(plan, kConditionReady).reason, "ShardsReady");
}

// ---- claims ------------------------------------------------------------------------------

Json unclaimed(Json target) {
  target["metadata"]["annotations"].erase("shardscaler.io/claimed-by");
  return target;
}

TEST(Claim, AnUnclaimedTargetIsClaimedFirstAndAlone) {
  const Plan plan = planShardSet(
      World{shardSetJson(3, retain3d()), unclaimed(targetJson(5)), attachedShards(0, 5)}.input());
  EXPECT_THAT(steps(plan), ElementsAre("claim"));
  EXPECT_EQ(plan.actions[0].resource_version, "1001");
  EXPECT_EQ(plan.actions[0].merge_patch,
            Json::parse(R"({"metadata": {"uid": "6f1c0a52-prom-main", "resourceVersion": "1001",
                            "annotations": {"shardscaler.io/claimed-by": "main",
                                            "shardscaler.io/saved-shard-retention-policy": "null"}},
                            "spec": {"shardRetentionPolicy": {"whenScaled": "Retain",
                                     "retain": {"retentionPeriod": "0"}}}})"));
}

// The shards the read found attached to the target get the guard label in the claim's plan,
// behind the claim (which the applier sends first, alone): a first claim needs no read round
// between the two. A shard that is not the target's (another owner) is not labelled.
TEST(Claim, TheTargetsShardsAreGuardedBehindTheClaim) {
  std::vector<Json> shards = attachedShards(0, 3);
  for (Json& s : shards) s["metadata"]["labels"].erase("shardscaler.io/shardset");
  Json foreign = attachedShard(3);
  foreign["metadata"]["labels"].erase("shardscaler.io/shardset");
  foreign["metadata"]["ownerReferences"][0]["uid"] = "another-target";
  shards.push_back(foreign);
  const Plan plan =
      planShardSet(World{shardSetJson(3, retain3d()), unclaimed(targetJson(3)), shards}.input());
  EXPECT_THAT(steps(plan), ElementsAre("claim", "label 0", "label 1", "label 2"));
  // No transition rides along: the ShardSet asks for 2, and the next round, which reads again,
  // starts it.
  const Plan scaled = planShardSet(
      World{shardSetJson(2, retain3d()), unclaimed(targetJson(3)), attachedShards(0, 3)}.input());
  EXPECT_THAT(steps(scaled), ElementsAre("claim"));
}

TEST(Claim, ASecondShardSetOnTheTargetTouchesNothingAndSaysWhy) {
  World w{shardSetJson(3, retain3d()),
          withAnnotation(targetJson(5), "shardscaler.io/claimed-by", "first"),
          attachedShards(0, 5)};
  w.claim_holder_exists = true;
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.decision.mode, PlanMode::TargetClaimed);
  EXPECT_EQ(condition(plan, kConditionReady).reason, "TargetClaimed");
  EXPECT_THAT(condition(plan, kConditionDegraded).message,
              HasSubstr("Prometheus main is managed by ShardSet first"));
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, EventType::Warning);
  EXPECT_EQ(plan.events[0].reason, "TargetClaimed");
  // Not even a target it paused is resumed, nor a retained shard touched: it is not its own.
  World paused = w;
  paused.target = pausedAt(*w.target, "2026-11-22T09:00:00Z");
  EXPECT_TRUE(planShardSet(paused.input()).actions.empty());
}

TEST(Claim, AClaimLeftByAShardSetThatIsGoneIsTakenOver) {
  World w{shardSetJson(3), withAnnotation(targetJson(3), "shardscaler.io/claimed-by", "gone"),
          attachedShards(0, 3)};
  w.claim_holder_exists = false;
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("claim"));
  EXPECT_THAT(plan.actions[0].summary, HasSubstr("its claim by ShardSet gone, which is gone"));
}

// ---- release -------------------------------------------------------------------------------

World releasing(World w) {
  w.purpose = PlanPurpose::Release;
  return w;
}

TEST(Release, MidScaleDownUndoesResumesAndDropsTheClaimAndTheLabels) {
  const Plan plan = planShardSet(
      releasing({shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:00Z"),
                 attachedShards(0, 4) + std::vector{retainedShard(4, kFuture)}})
          .input());
  EXPECT_THAT(steps(plan), ElementsAre("reattach 4", "unlabel 0", "unlabel 1", "unlabel 2",
                                       "unlabel 3", "update unpause release-claim"));
  EXPECT_EQ(plan.decision.mode, PlanMode::Release);
}

TEST(Release, NeverScalesATopologyTarget) {
  // spec.shards 4 would round up to 6 with three zones; releasing keeps the target's 4.
  const Json topology{
      {"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b", "c"}}}}}}};
  const Plan plan = planShardSet(
      releasing({shardSetJson(4), targetJson(4, topology), attachedShards(0, 4)}).input());
  for (const Action& a : plan.actions) {
    EXPECT_FALSE(a.merge_patch.contains("spec") && a.merge_patch["spec"].contains("shards"))
        << a.summary;
  }
  EXPECT_THAT(steps(plan), ElementsAre("unlabel 0", "unlabel 1", "unlabel 2", "unlabel 3",
                                       "update release-claim"));
}

TEST(Release, AnInvalidSpecStillResumesTheTargetItPaused) {
  const Plan plan = planShardSet(
      releasing({shardSetJson(-2, retainPolicy("Keep")),
                 pausedAt(targetJson(3), "2026-11-22T09:00:00Z"), attachedShards(0, 3)})
          .input());
  EXPECT_THAT(steps(plan).back(), "update unpause release-claim");
}

TEST(Release, ATargetClaimedByAnotherShardSetIsNotTouched) {
  EXPECT_TRUE(
      planShardSet(releasing({shardSetJson(3),
                              withAnnotation(targetJson(3), "shardscaler.io/claimed-by", "other"),
                              attachedShards(0, 3)})
                       .input())
          .actions.empty());
}

// ---- a write refused for good --------------------------------------------------------------

TEST(Hold, APausedTransitionIsUndoneAndNoneStarts) {
  World mid{shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:00Z"),
            attachedShards(0, 4) + std::vector{retainedShard(4, kFuture)}};
  mid.hold = true;
  const Plan undo = planShardSet(mid.input());
  EXPECT_THAT(steps(undo), ElementsAre("reattach 4", "update unpause"));
  EXPECT_EQ(undo.decision.abandoned_because, "a write was refused for good");

  World idle{shardSetJson(3, retain3d()), targetJson(5), attachedShards(0, 5)};
  idle.hold = true;
  const Plan none = planShardSet(idle.input());
  EXPECT_TRUE(none.actions.empty());
  EXPECT_EQ(none.decision.waiting_for, "a write refused for good to be retried");
}

// The undo's re-attach of shard 4 was refused for good (no update on the target's finalizers):
// the target resumes without it, and the shard stays retained, rather than stay paused.
TEST(Hold, AnUndoResumesWithoutAReattachRefusedForGood) {
  World mid{shardSetJson(3, retain3d()), pausedAt(targetJson(5), "2026-11-22T09:59:00Z"),
            attachedShards(0, 4) + std::vector{retainedShard(4, kFuture)}};
  mid.hold = true;
  mid.reattach_refused = {shardName(4)};
  for (const bool guarded : {true, false}) {
    mid.guarded = guarded;
    EXPECT_THAT(steps(planShardSet(mid.input())), ElementsAre("update unpause"));
  }
}

// Found by the planner property test (seed 180, Delete): an undone scale-up kept the shard the
// operator had created above the target's count with a "never" deadline, under whenScaled=Delete.
// Undone, an exposed shard is kept either way, never deleted on doubt; under Retain for the
// retention period, under Delete only until the target rests at its count, when it goes as a
// scaled-away shard would.
TEST(Hold, AnUndoneScaleUpKeepsAShardAboveTheCountAsThePolicySays) {
  for (const bool retain : {true, false}) {
    SCOPED_TRACE(retain ? "Retain" : "Delete");
    const Json policy = retain ? retain3d() : retainPolicy("Delete", "3d");
    World mid{shardSetJson(5, policy), pausedAt(targetJson(3), "2026-11-22T09:59:00Z"),
              attachedShards(0, 4)};
    mid.hold = true;
    const Plan undo = planShardSet(mid.input());
    EXPECT_THAT(steps(undo), ElementsAre("detach 3", "update unpause"));
    EXPECT_EQ(
        only(undo, ActionType::DetachStatefulSet, 3)
            .merge_patch["metadata"]["annotations"]["operator.prometheus.io/deletion-timestamp"],
        retain ? "2026-11-25T10:00:00Z" : "2026-11-22T10:00:00Z");
    if (retain) continue;
    World rest{shardSetJson(3, policy), targetJson(3),
               attachedShards(0, 3) + std::vector{retainedShard(3, "2026-11-22T10:00:00Z")}};
    rest.now += std::chrono::seconds(1);
    EXPECT_THAT(steps(planShardSet(rest.input())), ElementsAre("delete 3"));
  }
}

}  // namespace
}  // namespace shardscaler::planner
