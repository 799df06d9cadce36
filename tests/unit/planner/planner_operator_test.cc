// The planner with the Prometheus Operator as it really behaves (docs/design/operator.md): garbage
// collection of retained shards, pauses the operator never acknowledges, other writers of the
// target's spec.shards, and agents that have no shards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"

namespace shardscaler::planner {
namespace planner_operator_test {
namespace {

using namespace std::chrono_literals;
using testing::attachedShard;
using testing::attachedShards;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::operator+;  // NOLINT(misc-unused-using-decls): used, the check misses operators
using testing::condition;
using testing::Json;
using testing::kTargetUid;
using testing::only;
using testing::pausedBy;
using testing::retainedShard;
using testing::retainPolicy;
using testing::shardSetJson;
using testing::steps;
using testing::targetJson;
using testing::World;

constexpr const char* kShardSetUid = "0b5e1c77-shardset-main";
const std::string kFuture = "2026-11-25T10:00:00Z";

// A ShardSet as the API server returns it: with a uid and a creation time.
Json storedShardSet(int64_t shards, const Json& spec_patch) {
  Json ss = shardSetJson(shards, spec_patch);
  ss["metadata"]["uid"] = kShardSetUid;
  ss["metadata"]["creationTimestamp"] = "2026-11-22T09:00:00Z";
  return ss;
}

Json shardSetOwnerRef() {
  return {{"apiVersion", "shardscaler.io/v1alpha1"},
          {"kind", "ShardSet"},
          {"name", "main"},
          {"uid", kShardSetUid},
          {"controller", true}};
}

// A retained shard whose controller ownerReference a detach moved to the ShardSet.
Json ownedRetainedSts(int index) {
  Json sts = retainedShard(index, kFuture);
  sts["metadata"]["ownerReferences"] = Json::array({shardSetOwnerRef()});
  return sts;
}

// ---- garbage collection ----------------------------------------------------------------------

TEST(GarbageCollection, ADetachMovesTheControllerReferenceFromTheTargetToTheShardSet) {
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(4),
                attachedShards(0, 4)};
  const Plan plan = planShardSet(w.input());
  const Json& refs =
      only(plan, ActionType::DetachStatefulSet, 3).merge_patch["metadata"]["ownerReferences"];
  ASSERT_EQ(refs, Json::array({shardSetOwnerRef()})) << refs.dump();
}

TEST(GarbageCollection, AShardSetWithoutAUidLeavesOwnershipAsItIs) {
  const World w{shardSetJson(2, retainPolicy("Retain", "1h")), targetJson(4), attachedShards(0, 4)};
  const Plan plan = planShardSet(w.input());
  EXPECT_FALSE(only(plan, ActionType::DetachStatefulSet, 3)
                   .merge_patch["metadata"]
                   .contains("ownerReferences"));
}

TEST(GarbageCollection, AReattachGivesTheControllerReferenceBackToTheTarget) {
  const World w{storedShardSet(3, retainPolicy("Retain", "1h")), targetJson(2),
                attachedShards(0, 2) + std::vector{ownedRetainedSts(2)}};
  const Plan plan = planShardSet(w.input());
  const Json& refs =
      only(plan, ActionType::ReattachStatefulSet, 2).merge_patch["metadata"]["ownerReferences"];
  ASSERT_EQ(refs.size(), 1u) << refs.dump();
  EXPECT_EQ(refs[0]["uid"], kTargetUid);
  EXPECT_EQ(refs[0]["kind"], "Prometheus");
  EXPECT_EQ(refs[0]["controller"], true);
  EXPECT_EQ(refs[0]["blockOwnerDeletion"], true);  // as the operator writes it
}

TEST(GarbageCollection, AShardOwnedByTheShardSetIsStillOneOfTheTargetsRetainedShards) {
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
                attachedShards(0, 2) + std::vector{ownedRetainedSts(2)}};
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << ::testing::PrintToString(steps(plan));
  ASSERT_EQ(plan.status.retained_shards.size(), 1u);
  EXPECT_EQ(plan.status.retained_shards[0].stateful_set, "prometheus-main-shard-2");
}

// Detached by a version before the detach moved the reference: the target still owns it, so
// deleting the target would take it. The next plan moves the reference, unless it re-attaches it.
TEST(GarbageCollection, AShardRetainedWhileTheTargetOwnedItIsAdopted) {
  World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
          attachedShards(0, 2) + std::vector{retainedShard(2, kFuture)}};
  Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("adopt 2"));
  const Action& adopt = only(plan, ActionType::AdoptStatefulSet, 2);
  EXPECT_EQ(adopt.merge_patch["metadata"]["ownerReferences"], Json::array({shardSetOwnerRef()}));
  EXPECT_EQ(adopt.merge_patch["metadata"]["uid"], "sts-uid-2");
  // Its deadline under today's names too: shardscaler's own tells the caches it is adopted.
  const Json& annotations = adopt.merge_patch["metadata"]["annotations"];
  EXPECT_EQ(annotations["shardscaler.io/deletion-deadline"], kFuture);
  EXPECT_EQ(annotations["operator.prometheus.io/deletion-deadline"], kFuture);
  EXPECT_EQ(condition(plan, kConditionReady).status, "True") << "nothing is scaling";
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, kReasonReconciling);

  w.shard_set = storedShardSet(3, retainPolicy("Retain", "1h"));
  plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), Not(::testing::Contains("adopt 2")));
  EXPECT_THAT(steps(plan), ::testing::Contains("reattach 2"));
}

TEST(GarbageCollection, AReleaseLetsGoOfRetainedShardsSoTheShardSetsDeletionKeepsThem) {
  World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
          attachedShards(0, 2) + std::vector{ownedRetainedSts(2)}};
  w.purpose = PlanPurpose::Release;
  const Plan plan = planShardSet(w.input());
  const Action& orphan = only(plan, ActionType::OrphanStatefulSet, 2);
  EXPECT_EQ(orphan.merge_patch["metadata"]["ownerReferences"], Json::array());
  EXPECT_EQ(orphan.merge_patch["metadata"]["uid"], "sts-uid-2");
  ASSERT_EQ(orphan.events.size(), 1u) << "the next round no longer finds the shard to name it";
  EXPECT_EQ(orphan.events[0].reason, kReasonRetainedShardsOrphaned);
  EXPECT_THAT(orphan.events[0].message, HasSubstr("prometheus-main-shard-2"));

  // The target is gone: still nothing of ours may take the shard with it.
  w.target.reset();
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("orphan 2"));
}

TEST(GarbageCollection, AReleaseLeavesShardsTheTargetStillOwns) {
  World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
          attachedShards(0, 2) + std::vector{retainedShard(2, kFuture)}};
  w.purpose = PlanPurpose::Release;
  EXPECT_THAT(steps(planShardSet(w.input())), Not(::testing::Contains("orphan 2")));
}

// ---- the operator's own retention and a shard's lives ---------------------------------------

// Delete with a drain (due at the detach) and Retain 1h: the two ways a detach picks a deadline.
std::vector<Json> detachingPolicies() {
  Json drain = retainPolicy("Delete");
  drain["shardRetentionPolicy"]["drain"] = {{"enabled", true}};
  return {drain, retainPolicy("Retain", "1h")};
}

// The plan's detach of shard `index`, applied to its StatefulSet in `w` as a merge patch.
const Action& applyDetach(World& w, const Plan& plan, int index) {
  const Action& detach = only(plan, ActionType::DetachStatefulSet, index);
  for (Json& sts : w.stateful_sets) {
    if (sts["metadata"]["name"] == detach.object_name) sts.merge_patch(detach.merge_patch);
  }
  return detach;
}
// The returned action lives in the plan: a temporary plan would leave it dangling.
const Action& applyDetach(World& w, const Plan&& plan, int index) = delete;

// The operator reads an unreadable operator.prometheus.io/deletion-deadline as never: a detach
// keeps it never, whatever the ShardSet's policy, so the shard is never due.
TEST(OperatorRetention, AnUnreadableOperatorDeadlineStaysNeverThroughADetach) {
  for (const Json& policy : detachingPolicies()) {
    SCOPED_TRACE(policy.dump());
    Json kept = testing::attachedShard(2);
    kept["metadata"]["annotations"]["operator.prometheus.io/deletion-deadline"] = "next tuesday";
    World w{storedShardSet(2, policy), targetJson(3), attachedShards(0, 2) + std::vector{kept}};
    const Plan plan = planShardSet(w.input());
    const Action& detach = applyDetach(w, plan, 2);
    ASSERT_TRUE(detach.deadline.has_value());
    EXPECT_TRUE(detach.deadline->isNever()) << detach.deadline->toAnnotation();
    const Json& annotations = detach.merge_patch["metadata"]["annotations"];
    EXPECT_EQ(annotations["operator.prometheus.io/deletion-deadline"], "0001-01-01T00:00:00Z");
    EXPECT_EQ(annotations["shardscaler.io/deletion-deadline"], "0001-01-01T00:00:00Z");

    w.target = targetJson(2);
    w.now += 24h * 400;
    const Plan later = planShardSet(w.input());
    EXPECT_TRUE(later.actions.empty()) << describe(later);
    EXPECT_TRUE(later.decision.drain_checks.empty()) << "never is never due";
  }
}

// A shard the operator's own retention kept (v0.92+) keeps the operator's deadline when detached.
TEST(OperatorRetention, ADetachKeepsADeadlineTheOperatorsOwnRetentionSet) {
  for (const Json& policy : detachingPolicies()) {
    SCOPED_TRACE(policy.dump());
    Json kept = testing::attachedShard(2);
    kept["metadata"]["annotations"]["operator.prometheus.io/deletion-deadline"] = kFuture;
    World w{storedShardSet(2, policy), targetJson(3), attachedShards(0, 2) + std::vector{kept}};
    const Plan plan = planShardSet(w.input());
    const Action& detach = applyDetach(w, plan, 2);
    EXPECT_EQ(detach.deadline->toAnnotation(), kFuture);
  }
}

// A shard detached, marked and then taken back (a user or the operator put
// operator.prometheus.io/name back) carries the marks of that life. Detached again, it starts a
// fresh one: its own deadline (the operator.prometheus.io/deletion-deadline it carries is the copy
// the first detach wrote, not the operator's) and no drain marks, so it is neither due at once nor
// deleted without a check.
TEST(OperatorRetention, ADetachAgainStartsAFreshLife) {
  const std::string old_deadline = "2026-11-21T08:00:00Z";
  Json relabelled = retainedShard(2, old_deadline);
  Json& md = relabelled["metadata"];
  md["labels"]["operator.prometheus.io/name"] = "main";
  md["annotations"]["shardscaler.io/deletion-deadline"] = old_deadline;
  md["annotations"]["operator.prometheus.io/deletion-deadline"] = old_deadline;
  md["annotations"]["shardscaler.io/detached-at"] = "2026-11-21T07:00:00Z";
  md["annotations"]["shardscaler.io/draining-since"] = "2026-11-21T08:00:01Z";
  md["annotations"]["shardscaler.io/drained-at"] = "2026-11-21T08:10:00Z";
  for (const Json& policy : detachingPolicies()) {
    SCOPED_TRACE(policy.dump());
    const bool retain = policy["shardRetentionPolicy"]["whenScaled"] == "Retain";
    World w{storedShardSet(2, policy), targetJson(3),
            attachedShards(0, 2) + std::vector{relabelled}};
    const Plan plan = planShardSet(w.input());
    const Action& detach = applyDetach(w, plan, 2);
    EXPECT_EQ(detach.deadline->toAnnotation(),
              retain ? "2026-11-22T11:00:00Z" : "2026-11-22T10:00:00Z");
    const Json& annotations = detach.merge_patch["metadata"]["annotations"];
    EXPECT_TRUE(annotations.contains("shardscaler.io/drained-at") &&
                annotations["shardscaler.io/drained-at"].is_null())
        << annotations.dump();
    EXPECT_TRUE(annotations.contains("shardscaler.io/draining-since") &&
                annotations["shardscaler.io/draining-since"].is_null())
        << annotations.dump();

    // The next rounds: under Retain nothing is due for an hour; under Delete the drain is
    // checked before anything is deleted.
    w.target = targetJson(2);
    w.now += 1min;
    const Plan next = planShardSet(w.input());
    EXPECT_THAT(steps(next), Not(::testing::Contains("delete 2"))) << describe(next);
    if (retain) {
      EXPECT_TRUE(next.decision.drain_checks.empty());
    } else {
      ASSERT_EQ(next.decision.drain_checks.size(), 1u);
    }
  }
}

// ---- the operator's retention holds what a foreign write removes -----------------------------

const Json kHeld = Json::parse(R"({"whenScaled": "Retain", "retain": {"retentionPeriod": "0"}})");
constexpr const char* kSaved = "shardscaler.io/saved-shard-retention-policy";

// A Prometheus shardscaler holds at its policy, its own saved as `own`.
Json heldTarget(int64_t shards, const std::string& own) {
  Json target = targetJson(shards, {{"shardRetentionPolicy", kHeld}});
  target["metadata"]["annotations"][kSaved] = own;
  return target;
}

Json unclaimedTarget(int64_t shards, const Json& spec_patch = Json::object(),
                     TargetKind kind = TargetKind::Prometheus) {
  return targetJson(shards, spec_patch, {.kind = kind, .claimed_by = ""});
}

TEST(OperatorRetentionHold, TheClaimHoldsAPrometheusAtRetainAndSavesItsOwnPolicy) {
  World w{storedShardSet(3, Json::object()), unclaimedTarget(3), attachedShards(0, 3)};
  Plan plan = planShardSet(w.input());
  const Json claim = only(plan, ActionType::ClaimTarget).merge_patch;
  EXPECT_EQ(claim["spec"]["shardRetentionPolicy"], kHeld) << claim.dump();
  EXPECT_EQ(claim["metadata"]["annotations"][kSaved], "null") << claim.dump();
  EXPECT_EQ(claim["metadata"]["resourceVersion"], "1001");
  EXPECT_THAT(only(plan, ActionType::ClaimTarget).summary, HasSubstr("holding"));

  // Its own Delete, with a period the operator would not use: replaced whole, and saved as it was.
  w.target =
      unclaimedTarget(3, {{"shardRetentionPolicy",
                           {{"whenScaled", "Delete"}, {"retain", {{"retentionPeriod", "3d"}}}}}});
  plan = planShardSet(w.input());
  const Json own = only(plan, ActionType::ClaimTarget).merge_patch;
  EXPECT_EQ(own["spec"]["shardRetentionPolicy"], kHeld) << own.dump();
  EXPECT_EQ(Json::parse(own["metadata"]["annotations"][kSaved].get<std::string>()),
            Json::parse(R"({"whenScaled": "Delete", "retain": {"retentionPeriod": "3d"}})"));
}

TEST(OperatorRetentionHold, ATargetThatRetainsByItselfAndAnAgentAreNotHeld) {
  World w{storedShardSet(3, Json::object()), unclaimedTarget(3, retainPolicy("Retain", "1h")),
          attachedShards(0, 3)};
  Json claim = only(planShardSet(w.input()), ActionType::ClaimTarget).merge_patch;
  EXPECT_FALSE(claim.contains("spec")) << claim.dump();
  EXPECT_FALSE(claim["metadata"]["annotations"].contains(kSaved)) << claim.dump();

  // PrometheusAgent has no shard retention of its own (operator v0.93).
  Json ss = storedShardSet(3, Json::object());
  ss["spec"]["targetRef"]["kind"] = "PrometheusAgent";
  const World agent{ss, unclaimedTarget(3, Json::object(), TargetKind::PrometheusAgent), {}};
  const Plan plan = planShardSet(agent.input());
  claim = only(plan, ActionType::ClaimTarget).merge_patch;
  EXPECT_FALSE(claim.contains("spec")) << claim.dump();
  EXPECT_THAT(plan.decision.operator_retention, HasSubstr("PrometheusAgent"));
}

// A target claimed before shardscaler held targets gets the hold with its next pause.
TEST(OperatorRetentionHold, APauseHoldsATargetClaimedWithoutIt) {
  World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(3), attachedShards(0, 3)};
  const Json pause = only(planShardSet(w.input()), ActionType::PauseTarget).merge_patch;
  EXPECT_EQ(pause["spec"]["paused"], true);
  EXPECT_EQ(pause["spec"]["shardRetentionPolicy"], kHeld) << pause.dump();
  EXPECT_EQ(pause["metadata"]["annotations"][kSaved], "null") << pause.dump();

  // Held already: the pause is only a pause.
  w.target = heldTarget(3, "null");
  const Json again = only(planShardSet(w.input()), ActionType::PauseTarget).merge_patch;
  EXPECT_EQ(again["spec"], Json::parse(R"({"paused": true})")) << again.dump();
  EXPECT_FALSE(again["metadata"]["annotations"].contains(kSaved)) << again.dump();
}

// The hold is not the target's policy: "the safer wins" (§16) reads the target's own, saved.
TEST(OperatorRetentionHold, TheShardSetsPolicyIsResolvedAgainstTheTargetsOwnSavedPolicy) {
  World w{storedShardSet(2, Json::object()), heldTarget(2, "null"), attachedShards(0, 2)};
  Plan plan = planShardSet(w.input());
  ASSERT_TRUE(plan.decision.policy);
  EXPECT_EQ(plan.decision.policy->when_scaled, WhenScaled::Delete);
  EXPECT_EQ(plan.decision.policy->when_scaled_source, "default");
  EXPECT_TRUE(plan.actions.empty()) << describe(plan);
  EXPECT_THAT(plan.decision.operator_retention, HasSubstr("held"));
  EXPECT_THAT(describe(plan), HasSubstr("operator retention: held"));

  w.target = heldTarget(2, R"({"whenScaled":"Retain","retain":{"retentionPeriod":"2h"}})");
  plan = planShardSet(w.input());
  ASSERT_TRUE(plan.decision.policy);
  EXPECT_EQ(plan.decision.policy->when_scaled, WhenScaled::Retain);
  EXPECT_EQ(plan.decision.policy->when_scaled_source, "target");
  EXPECT_EQ(plan.decision.policy->period, std::chrono::nanoseconds(2h));
}

// Under the hold the operator keeps the shards above a lowered count with no deadline; those are
// the ShardSet's to decide: deleted under Delete (here without a drain), detached with the
// ShardSet's own deadline under Retain.
TEST(OperatorRetentionHold, ShardsTheOperatorKeepsForTheHoldGoAsTheShardSetsPolicySays) {
  const std::string never = "0001-01-01T00:00:00Z";
  auto keptByOperator = [&](int index) {
    Json sts = attachedShard(index);
    sts["metadata"]["annotations"]["operator.prometheus.io/deletion-deadline"] = never;
    return sts;
  };
  Json target = heldTarget(2, "null");
  target["metadata"]["annotations"]["shardscaler.io/scaled-down-at"] = "2026-11-22T09:00:00Z";
  World w{storedShardSet(2, retainPolicy("Delete")), target,
          attachedShards(0, 2) + std::vector{keptByOperator(2), keptByOperator(3)}};
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("delete 2", "delete 3"));

  // The target's own Retain kept them: never deleted by shardscaler.
  Json own = targetJson(2, retainPolicy("Retain"));
  own["metadata"]["annotations"]["shardscaler.io/scaled-down-at"] = "2026-11-22T09:00:00Z";
  w.target = own;
  EXPECT_THAT(steps(planShardSet(w.input())), Not(::testing::Contains("delete 2")));

  // Retain: detached until now + the ShardSet's period, not never.
  w.target = heldTarget(4, "null");
  w.shard_set = storedShardSet(2, retainPolicy("Retain", "1h"));
  const Plan plan = planShardSet(w.input());
  const Action& detach = only(plan, ActionType::DetachStatefulSet, 2);
  ASSERT_TRUE(detach.deadline);
  EXPECT_EQ(detach.deadline->toAnnotation(), "2026-11-22T11:00:00Z");
}

TEST(OperatorRetentionHold, TheReleaseGivesTheTargetItsOwnPolicyBack) {
  World w{storedShardSet(2, Json::object()), heldTarget(2, "null"), attachedShards(0, 2)};
  w.purpose = PlanPurpose::Release;
  Plan plan = planShardSet(w.input());
  Json update = only(plan, ActionType::UpdateTarget).merge_patch;
  EXPECT_TRUE(update["spec"].contains("shardRetentionPolicy"));
  EXPECT_TRUE(update["spec"]["shardRetentionPolicy"].is_null()) << update.dump();
  EXPECT_TRUE(update["metadata"]["annotations"][kSaved].is_null()) << update.dump();
  EXPECT_TRUE(update["metadata"]["annotations"]["shardscaler.io/claimed-by"].is_null());
  EXPECT_THAT(only(plan, ActionType::UpdateTarget).summary,
              HasSubstr("give back its own spec.shardRetentionPolicy"));

  // RFC 7386 merges: what the hold added and the saved policy lacks is removed.
  w.target = heldTarget(2, R"({"whenScaled":"Delete"})");
  update = only(planShardSet(w.input()), ActionType::UpdateTarget).merge_patch;
  EXPECT_EQ(update["spec"]["shardRetentionPolicy"],
            Json::parse(R"({"whenScaled": "Delete", "retain": null})"));
  Json restored = kHeld;
  restored.merge_patch(update["spec"]["shardRetentionPolicy"]);
  EXPECT_EQ(restored, Json::parse(R"({"whenScaled": "Delete"})"));

  w.target = heldTarget(2, R"({"whenScaled":"Delete","retain":{"retentionPeriod":"3d"}})");
  update = only(planShardSet(w.input()), ActionType::UpdateTarget).merge_patch;
  restored = kHeld;
  restored.merge_patch(update["spec"]["shardRetentionPolicy"]);
  EXPECT_EQ(restored,
            Json::parse(R"({"whenScaled": "Delete", "retain": {"retentionPeriod": "3d"}})"));
}

// Someone wrote a policy of their own since the hold: it stays; only the saved one is dropped.
TEST(OperatorRetentionHold, TheReleaseLeavesAPolicyWrittenSinceTheHold) {
  Json target = targetJson(2, retainPolicy("Delete"));
  target["metadata"]["annotations"][kSaved] = "null";
  World w{storedShardSet(2, Json::object()), target, attachedShards(0, 2)};
  w.purpose = PlanPurpose::Release;
  const Json update = only(planShardSet(w.input()), ActionType::UpdateTarget).merge_patch;
  EXPECT_FALSE(update.contains("spec")) << update.dump();
  EXPECT_TRUE(update["metadata"]["annotations"][kSaved].is_null()) << update.dump();
}

// An operator whose CRD has no spec.shardRetentionPolicy prunes the hold; the next pause does not
// write it again (each write would be pruned), and `shardscaler plan` says the hold is lost.
TEST(OperatorRetentionHold, AHoldThatDidNotStickIsNotWrittenAgain) {
  Json target = targetJson(3);
  target["metadata"]["annotations"][kSaved] = "null";
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), target, attachedShards(0, 3)};
  const Plan plan = planShardSet(w.input());
  const Json pause = only(plan, ActionType::PauseTarget).merge_patch;
  EXPECT_FALSE(pause["spec"].contains("shardRetentionPolicy")) << pause.dump();
  EXPECT_THAT(plan.decision.operator_retention, HasSubstr("lost"));
}

// The target's own policy cannot be told: nothing is decided on a guess.
TEST(OperatorRetentionHold, AnUnreadableSavedPolicyIsAnInvalidSpecThatNamesIt) {
  const World w{storedShardSet(2, Json::object()), heldTarget(3, "{not json"),
                attachedShards(0, 3)};
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  ASSERT_FALSE(plan.decision.problems.empty());
  EXPECT_THAT(plan.decision.problems.front().describe(), HasSubstr(kSaved));
  EXPECT_THAT(steps(plan), Not(::testing::Contains(::testing::StartsWith("delete"))));
}

// ---- pauses the operator never acknowledges ------------------------------------------------

TEST(PauseBackOff, TheHoldDoublesWithEachUnacknowledgedPauseUpToTheCap) {
  EXPECT_EQ(pauseHold(30s, 0), 30s);
  EXPECT_EQ(pauseHold(30s, 1), 30s);
  EXPECT_EQ(pauseHold(30s, 2), 60s);
  EXPECT_EQ(pauseHold(30s, 3), 120s);
  EXPECT_EQ(pauseHold(30s, 5), 480s);
  EXPECT_EQ(pauseHold(30s, 6), kMaxPauseHold);
  EXPECT_EQ(pauseHold(30s, std::numeric_limits<int32_t>::max()), kMaxPauseHold);
  EXPECT_EQ(pauseHold(15min, 4), 15min);  // never shorter than the timeout itself
}

Json unacknowledgedStatus(Json ss, int pauses, const std::string& since) {
  ss["status"]["unacknowledgedPauses"] = pauses;
  ss["status"]["conditions"] = {{{"type", "Progressing"},
                                 {"status", "False"},
                                 {"reason", "PauseNotAcknowledged"},
                                 {"message", "..."},
                                 {"lastTransitionTime", since}}};
  return ss;
}

TEST(PauseBackOff, AnotherUnacknowledgedPauseCountsAndSaysWhatToCheck) {
  Json target = pausedBy(targetJson(5), "main");
  target["metadata"]["annotations"]["shardscaler.io/paused-at"] = "2026-11-22T09:59:20Z";
  target["status"]["paused"] = false;
  World w{unacknowledgedStatus(storedShardSet(3, retainPolicy("Retain", "3d")), 2,
                               "2026-11-22T09:50:00Z"),
          target, attachedShards(0, 5)};
  w.guarded = false;
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("update unpause"));
  EXPECT_EQ(plan.decision.unacknowledged_pauses, 3);
  EXPECT_EQ(plan.status.unacknowledged_pauses, 3);
  const Condition& degraded = condition(plan, kConditionDegraded);
  EXPECT_EQ(degraded.reason, "PauseNotAcknowledged");
  EXPECT_THAT(degraded.message, HasSubstr("3 pauses in a row"));
  EXPECT_THAT(degraded.message, HasSubstr("held 2m"));
  EXPECT_THAT(degraded.message, HasSubstr("v0.60 or later"));
  EXPECT_THAT(degraded.message, HasSubstr("prometheuses/status"));
}

TEST(PauseBackOff, TheNextPauseWaitsTheLongerHold) {
  // Two unacknowledged pauses: the hold is 60s, not the 30s timeout.
  World w{unacknowledgedStatus(storedShardSet(3, retainPolicy("Retain", "3d")), 2,
                               "2026-11-22T09:59:20Z"),
          targetJson(5), attachedShards(0, 5)};
  w.guarded = false;
  const Plan held = planShardSet(w.input());
  EXPECT_TRUE(held.actions.empty()) << ::testing::PrintToString(steps(held));
  EXPECT_EQ(held.requeue_after, 20s);
  EXPECT_EQ(held.status.unacknowledged_pauses, 2);

  w.shard_set = unacknowledgedStatus(storedShardSet(3, retainPolicy("Retain", "3d")), 2,
                                     "2026-11-22T09:58:50Z");
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("pause"));
}

TEST(PauseBackOff, AnAcknowledgedPauseResetsTheCount) {
  Json target = pausedBy(targetJson(5), "main");
  target["metadata"]["annotations"]["shardscaler.io/paused-at"] = "2026-11-22T09:59:40Z";
  World w{unacknowledgedStatus(storedShardSet(3, retainPolicy("Retain", "3d")), 4,
                               "2026-11-22T09:30:00Z"),
          target, attachedShards(0, 5)};
  w.guarded = false;
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.status.unacknowledged_pauses, 0);
  EXPECT_NE(condition(plan, kConditionDegraded).reason, "PauseNotAcknowledged");
}

// ---- other writers of spec.shards ------------------------------------------------------------

Json managedField(const std::string& manager, const std::string& operation, const Json& spec,
                  const std::string& time, const std::string& subresource = "") {
  Json entry{
      {"manager", manager}, {"operation", operation},   {"apiVersion", "monitoring.coreos.com/v1"},
      {"time", time},       {"fieldsType", "FieldsV1"}, {"fieldsV1", {{"f:spec", spec}}}};
  if (!subresource.empty()) entry["subresource"] = subresource;
  return entry;
}

PlanInput withWriters(const World& w) {
  PlanInput in = w.input();
  in.target_writers = in.target->spec_writers;
  return in;
}

TEST(OtherWriters, ASecondFieldManagerOfSpecShardsIsNamedInAWarning) {
  Json target = targetJson(2);
  target["metadata"]["managedFields"] = Json::array({
      // Created the target with its shard count before the ShardSet existed: history.
      managedField("kubectl-client-side-apply", "Update", {{"f:shards", Json::object()}},
                   "2026-11-22T08:00:00Z"),
      managedField("shardscaler", "Update", {{"f:shards", Json::object()}}, "2026-11-22T09:30:00Z"),
      managedField("PrometheusOperator", "Update", {{"f:paused", Json::object()}},
                   "2026-11-22T09:31:00Z", "status"),
      managedField("argocd-controller", "Apply",
                   {{"f:shards", Json::object()}, {"f:paused", Json::object()}},
                   "2026-11-22T09:40:00Z"),
  });
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), target, attachedShards(0, 2)};
  const Plan plan = planShardSet(withWriters(w));
  const Condition& writers = condition(plan, api::kConditionOtherWriters);
  EXPECT_EQ(writers.status, "True");
  EXPECT_EQ(writers.reason, "FieldManagerConflict");
  EXPECT_THAT(writers.message,
              HasSubstr("field manager \"argocd-controller\" (spec.shards, spec.paused, Apply)"));
  EXPECT_THAT(writers.message, HasSubstr("kubectl scale shardset/main"));
  EXPECT_THAT(writers.message, Not(HasSubstr("kubectl-client-side-apply")));
  EXPECT_THAT(writers.message, Not(HasSubstr("PrometheusOperator")));
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].type, EventType::Warning);
  EXPECT_EQ(plan.events[0].reason, "FieldManagerConflict");

  // Reported once: the same condition in status raises no second Event.
  World again = w;
  again.shard_set["status"]["conditions"] = {{{"type", "OtherWriters"},
                                              {"status", "True"},
                                              {"reason", "FieldManagerConflict"},
                                              {"message", writers.message},
                                              {"lastTransitionTime", "2026-11-22T09:41:00Z"}}};
  EXPECT_TRUE(planShardSet(withWriters(again)).events.empty());
}

TEST(OtherWriters, AnHpaOnTheTargetItselfIsNamed) {
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
                attachedShards(0, 2)};
  PlanInput in = w.input();
  in.target_hpas = {"monitoring/prometheus-main"};
  const Plan plan = planShardSet(in);
  const Condition& writers = condition(plan, api::kConditionOtherWriters);
  EXPECT_EQ(writers.status, "True");
  EXPECT_EQ(writers.reason, "HPATargetsTarget");
  EXPECT_THAT(writers.message, HasSubstr("HorizontalPodAutoscaler monitoring/prometheus-main"));
}

TEST(OtherWriters, OnlyShardscalerAndTheOperatorIsQuiet) {
  const World w{storedShardSet(2, retainPolicy("Retain", "1h")), targetJson(2),
                attachedShards(0, 2)};
  const Plan plan = planShardSet(withWriters(w));
  EXPECT_EQ(condition(plan, api::kConditionOtherWriters).status, "False");
  EXPECT_TRUE(plan.events.empty());
}

// ---- agents without shards ----------------------------------------------------------------------

TEST(AgentMode, ADaemonSetAgentIsAnInvalidSpecNotALoop) {
  const World w{storedShardSet(2, Json::object()),
                targetJson(1, {{"mode", "DaemonSet"}}, {.kind = TargetKind::PrometheusAgent}),
                {}};
  Json ss = w.shard_set;
  ss["spec"]["targetRef"]["kind"] = "PrometheusAgent";
  const World agent{ss, w.target, {}};
  const Plan plan = planShardSet(agent.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  EXPECT_TRUE(plan.actions.empty()) << ::testing::PrintToString(steps(plan));
  const Condition& ready = condition(plan, kConditionReady);
  EXPECT_EQ(ready.reason, "InvalidSpec");
  EXPECT_THAT(ready.message, HasSubstr("target.spec.mode"));
  EXPECT_THAT(ready.message, HasSubstr("DaemonSet"));
}

}  // namespace
}  // namespace planner_operator_test
}  // namespace shardscaler::planner
