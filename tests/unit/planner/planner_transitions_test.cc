// Every transition  of docs/design.md as one table: observed world in, ordered steps out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::planner {
namespace {

using namespace testing;  // fixtures
using ::testing::ElementsAreArray;

const std::string kFuture = "2026-11-25T10:00:00Z";  // now + 3d
const std::string kPast = "2026-11-20T10:00:00Z";
const std::string kNever = "0001-01-01T00:00:00Z";

Json retain3d() { return retainPolicy("Retain", "3d"); }
Json deleting() { return retainPolicy("Delete"); }

// The target as shardscaler left it after lowering spec.shards at `at` (under Delete).
Json scaledDownAt(Json target, const std::string& at) {
  target["metadata"]["annotations"]["shardscaler.io/scaled-down-at"] = at;
  return target;
}

Json with(Json j, const Json& spec) {
  j["spec"].merge_patch(spec);
  return j;
}

Json topology3() {
  return {
      {"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b", "c"}}}}}}};
}

struct Row {
  std::string name;
  World world;
  std::vector<std::string> steps;
  std::string ready;     // Ready reason
  std::string degraded;  // Degraded reason
};

std::vector<Row> rows() {
  const auto sts = [](int from, int to) { return attachedShards(from, to); };
  return {
      // Steady states.
      {"SteadyDelete",
       {shardSetJson(5, deleting()), targetJson(5), sts(0, 5)},
       {},
       "ShardsReady",
       "AsExpected"},
      {"SteadyRetainWithRetained",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kFuture)}},
       {},
       "ShardsReady",
       "AsExpected"},
      {"SteadyShardsAbsentOnTarget",
       {shardSetJson(1), with(targetJson(1), {{"shards", nullptr}}), sts(0, 1)},
       {},
       "ShardsReady",
       "AsExpected"},

      // Scale-down, Retain, from every crash point.
      {"DownRetainStart",
       {shardSetJson(3, retain3d()), targetJson(5), sts(0, 5)},
       {"pause", "detach 3", "detach 4", "update shards=3 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      {"DownRetainAfterPause",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "main"), sts(0, 5)},
       {"detach 3", "detach 4", "update shards=3 unpause"},
       "Scaling",
       "AsExpected"},
      {"DownRetainAfterOneDetach",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "main"),
        sts(0, 4) + std::vector{retainedShard(4, kFuture)}},
       {"detach 3", "update shards=3 unpause"},
       "Scaling",
       "AsExpected"},
      {"DownRetainAfterAllDetached",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "main"),
        sts(0, 3) + std::vector{retainedShard(3, kFuture), retainedShard(4, kFuture)}},
       {"update shards=3 unpause"},
       "Scaling",
       "AsExpected"},
      {"DownRetainPausedByUsNothingLeft",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(3), "main"),
        sts(0, 3) + std::vector{retainedShard(3, kFuture), retainedShard(4, kFuture)}},
       {"update unpause"},
       "Scaling",
       "AsExpected"},
      {"DownRetainUserScaledBackMidway",
       {shardSetJson(5, retain3d()), pausedBy(targetJson(5), "main"),
        sts(0, 3) + std::vector{retainedShard(3, kFuture), retainedShard(4, kFuture)}},
       {"reattach 3", "reattach 4", "update unpause"},
       "Scaling",
       "AsExpected"},
      {"DownRetainOperatorAlreadyLagging",  // target already at 3, excess still attached
       {shardSetJson(3, retain3d()), targetJson(3), sts(0, 5)},
       {"pause", "detach 3", "detach 4", "update unpause"},
       "Scaling",
       "AsExpected"},

      // Scale-down, Delete: shards first, deletes once the target no longer counts them.
      {"DownDelete",
       {shardSetJson(3, deleting()), targetJson(5), sts(0, 5)},
       {"update shards=3"},
       "Scaling",
       "AsExpected"},
      {"DownDeleteSecondStep",
       {shardSetJson(3, deleting()), targetJson(3), sts(0, 5)},
       {"delete 3", "delete 4"},
       "ShardsReady",
       "AsExpected"},
      // ... but not before the settle time since spec.shards dropped (fixed now 10:00:00, settle
      // 10 s): a sync started from the higher count would create a deleted shard again.
      {"DownDeleteWaitsTheSettleTimeAfterLowering",
       {shardSetJson(3, deleting()), scaledDownAt(targetJson(3), "2026-11-22T09:59:51.5Z"),
        sts(0, 5)},
       {},
       "Scaling",
       "AsExpected"},
      {"DownDeleteOnceTheSettleTimeHasPassed",
       {shardSetJson(3, deleting()), scaledDownAt(targetJson(3), "2026-11-22T09:59:50Z"),
        sts(0, 5)},
       {"delete 3", "delete 4"},
       "ShardsReady",
       "AsExpected"},
      {"DownDeletePausedByUs",
       {shardSetJson(3), pausedBy(targetJson(5), "main"), sts(0, 5)},
       {"update shards=3 unpause"},
       "Scaling",
       "AsExpected"},

      // Scale-up.
      {"UpNoRetained",
       {shardSetJson(5, retain3d()), targetJson(3), sts(0, 3)},
       {"update shards=5"},
       "Scaling",
       "AsExpected"},
      {"UpReattachesRetained",
       {shardSetJson(5, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(4, kFuture), retainedShard(3, kFuture)}},
       {"pause", "reattach 3", "reattach 4", "update shards=5 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      {"UpReattachesOnlyBelowWant",
       {shardSetJson(4, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kFuture), retainedShard(4, kFuture)}},
       {"pause", "reattach 3", "update shards=4 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      // Shard 3 is attached above the target's count: an operator sync from before the pause may
      // still delete it, guard or not, so the pause is stamped and acknowledged first.
      {"UpAfterPauseAndOneReattach",
       {shardSetJson(5, retain3d()), pausedBy(targetJson(3), "main"),
        sts(0, 4) + std::vector{retainedShard(4, kFuture)}},
       {"pause"},
       "Scaling",
       "AsExpected"},
      {"UpReusesExpiredRetained",  // below want: re-used, never deleted
       {shardSetJson(4, deleting()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kPast)}},
       {"pause", "reattach 3", "update shards=4 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      {"UpReattachesGarbageDeadlineRetained",
       {shardSetJson(4, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, "soon")}},
       {"pause", "reattach 3", "update shards=4 unpause any-rv"},
       "Scaling",
       "InvalidDeletionTimestamp"},
      {"UpWithDeletePolicyStillReattaches",
       {shardSetJson(5, deleting()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kFuture)}},
       {"pause", "reattach 3", "update shards=5 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      // The user shrank the target directly: paused, and raised once the pause is acknowledged and
      // the settle time has passed (UnexpectedShards.RaisingWaitsForTheSettleTimeGuardOrNot).
      {"UpSavesAttachedTheOperatorWouldDelete",
       {shardSetJson(5, retain3d()), targetJson(3), sts(0, 5)},
       {"pause"},
       "Scaling",
       "AsExpected"},

      // Expiry.
      {"ExpiryBeforeDeadline",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kFuture)}},
       {},
       "ShardsReady",
       "AsExpected"},
      {"ExpiryAtDeadline",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, "2026-11-22T10:00:00Z")}},
       {},
       "ShardsReady",
       "AsExpected"},
      {"ExpiryAfterDeadline",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) +
            std::vector{retainedShard(3, "2026-11-22T09:59:59Z"), retainedShard(4, kFuture)}},
       {"delete 3"},
       "ShardsReady",
       "AsExpected"},
      {"ExpiryNever",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, kNever)}},
       {},
       "ShardsReady",
       "AsExpected"},
      {"ExpiryGarbageKept",
       {shardSetJson(3, retain3d()), targetJson(3),
        sts(0, 3) + std::vector{retainedShard(3, "next week")}},
       {},
       "ShardsReady",
       "InvalidDeletionTimestamp"},
      {"ExpiryMissingAnnotationKept",
       {shardSetJson(3, retain3d()), targetJson(3), sts(0, 3) + std::vector{retainedShard(3, "")}},
       {},
       "ShardsReady",
       "InvalidDeletionTimestamp"},
      {"ExpiredButStillCountedByTarget",  // index < target shards: wait for the shards update
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "main"),
        sts(0, 3) + std::vector{retainedShard(3, kPast), retainedShard(4, kPast)}},
       {"update shards=3 unpause"},
       "Scaling",
       "AsExpected"},
      {"ExpiredBeingDeletedLeftAlone",
       {shardSetJson(3, retain3d()), targetJson(3), sts(0, 3) + std::vector{[] {
                                                      auto j = retainedShard(3, kPast);
                                                      j["metadata"]["deletionTimestamp"] =
                                                          "2026-11-22T09:00:00Z";
                                                      return j;
                                                    }()}},
       {},
       "ShardsReady",
       "AsExpected"},

      // Pausing belongs to whoever paused.
      {"UserPausedScaleDown",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), ""), sts(0, 5)},
       {"detach 3", "detach 4", "update shards=3"},
       "Scaling",
       "AsExpected"},
      {"OtherShardSetPausedScaleDown",
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "other"), sts(0, 5)},
       {"detach 3", "detach 4", "update shards=3"},
       "Scaling",
       "AsExpected"},
      {"UserPausedSteadyNeverUnpaused",
       {shardSetJson(3), pausedBy(targetJson(3), ""), sts(0, 3)},
       {},
       "ShardsReady",
       "AsExpected"},
      {"UserPausedScaleUp",
       {shardSetJson(5, retain3d()), pausedBy(targetJson(3), ""),
        sts(0, 3) + std::vector{retainedShard(3, kFuture)}},
       {"reattach 3", "update shards=5"},
       "Scaling",
       "AsExpected"},
      {"StalePausedByDropped",
       {shardSetJson(3),
        [] {
          auto t = targetJson(3);
          t["metadata"]["annotations"]["shardscaler.io/paused-by"] = "main";
          return t;
        }(),
        sts(0, 3)},
       {"update clear-paused-by"},
       "ShardsReady",
       "AsExpected"},

      // Crash-safety details.
      {"OperatorRelabelledDetachedShard",  // detached once, labels put back: detach again
       {shardSetJson(3, retain3d()), pausedBy(targetJson(5), "main"),
        sts(0, 4) + std::vector{[] {
          auto j = retainedShard(4, "2026-11-23T00:00:00Z");
          j["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
          return j;
        }()}},
       {"detach 3", "detach 4", "update shards=3 unpause"},
       "Scaling",
       "AsExpected"},
      {"ActiveShardWithStaleMarksCleaned",
       {shardSetJson(5, retain3d()), targetJson(5),
        sts(0, 4) + std::vector{[] {
          auto j = retainedShard(4, kPast);
          j["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
          return j;
        }()}},
       {"reattach 4"},
       "Scaling",
       "AsExpected"},

      // Missing or invalid.
      {"TargetMissing",
       {shardSetJson(3), std::nullopt, sts(0, 3)},
       {},
       "TargetNotFound",
       "TargetNotFound"},
      {"TargetOfOtherKindIsMissing",
       {shardSetJson(3), targetJson(3, {}, {.kind = TargetKind::PrometheusAgent}), {}},
       {},
       "TargetNotFound",
       "TargetNotFound"},
      {"TargetBeingDeleted",
       {shardSetJson(3),
        [] {
          auto t = targetJson(5);
          t["metadata"]["deletionTimestamp"] = "2026-11-22T09:00:00Z";
          return t;
        }(),
        sts(0, 5)},
       {},
       "TargetDeleting",
       "AsExpected"},
      {"InvalidMinAboveMax",
       {shardSetJson(3, {{"minShards", 4}, {"maxShards", 2}}), targetJson(5), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidUnknownKind",
       {with(shardSetJson(3), {{"targetRef", {{"kind", "Alertmanager"}}}}), targetJson(5),
        sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidNegativeShards",
       {shardSetJson(-1), targetJson(5), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidDuration",
       {shardSetJson(3, retainPolicy("Retain", "3 days")), targetJson(5), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidWhenScaled",
       {shardSetJson(3, retainPolicy("Keep")), targetJson(5), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidMissingShards",
       {with(shardSetJson(3), {{"shards", nullptr}}), targetJson(5), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidTargetRetention",
       {shardSetJson(3, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}),
        targetJson(5, {{"retention", "1 week"}}), sts(0, 5)},
       {},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidMidScaleDownRestores",
       {shardSetJson(3, {{"minShards", 4}, {"maxShards", 2}}), pausedBy(targetJson(5), "main"),
        sts(0, 3) + std::vector{retainedShard(3, kFuture), retainedShard(4, kPast)}},
       {"reattach 3", "reattach 4", "update unpause"},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidMidScaleUpKeepsTheExposedShard",  // retained instead of left to the operator
       {shardSetJson(-5), pausedBy(targetJson(3), "main"),
        sts(0, 4) + std::vector{retainedShard(4, kPast)}},
       {"detach 3", "update unpause"},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidUserPausedUntouched",
       {shardSetJson(-5), pausedBy(targetJson(5), ""),
        sts(0, 3) + std::vector{retainedShard(3, kFuture)}},
       {"reattach 3"},
       "InvalidSpec",
       "InvalidSpec"},
      {"InvalidTopologyNoMultiple",
       {shardSetJson(7, {{"minShards", 7}, {"maxShards", 8}}), targetJson(6, topology3()),
        sts(0, 6)},
       {},
       "InvalidSpec",
       "InvalidSpec"},

      // Clamps and Topology rounding.
      {"ClampToMax",
       {shardSetJson(60, {{"maxShards", 50}}), targetJson(40), sts(0, 40)},
       {"update shards=50"},
       "Scaling",
       "AsExpected"},
      {"ClampToMin",
       {shardSetJson(0, {{"minShards", 2}}), targetJson(3), sts(0, 3)},
       {"update shards=2"},
       "Scaling",
       "AsExpected"},
      {"ClampedAlreadyThere",
       {shardSetJson(60, {{"maxShards", 50}}), targetJson(50), sts(0, 50)},
       {},
       "ShardsReady",
       "AsExpected"},
      {"Topology4To6",
       {shardSetJson(4), targetJson(3, topology3()), sts(0, 3)},
       {"update shards=6"},
       "Scaling",
       "AsExpected"},
      {"Topology2To3",
       {shardSetJson(2), targetJson(6, topology3()), sts(0, 6)},
       {"update shards=3"},
       "Scaling",
       "AsExpected"},
      {"Topology7Max8To6",
       {shardSetJson(7, {{"maxShards", 8}}), targetJson(3, topology3()), sts(0, 3)},
       {"update shards=6"},
       "Scaling",
       "AsExpected"},

      // Defaults from the target.
      {"PolicyFromTarget",
       {shardSetJson(3), targetJson(5, retainPolicy("Retain", "1d")), sts(0, 5)},
       {"pause", "detach 3", "detach 4", "update shards=3 unpause any-rv"},
       "Scaling",
       "AsExpected"},
      {"PolicyDefaultDelete",
       {shardSetJson(3), targetJson(5), sts(0, 5)},
       {"update shards=3"},
       "Scaling",
       "AsExpected"},

      // Ownership: what is not provably the target's is never touched.
      {"ForeignStatefulSetsIgnored",
       {shardSetJson(3, deleting()), targetJson(3),
        sts(0, 3) + std::vector{
                        [] {
                          auto j = attachedShard(3);
                          j["metadata"]["ownerReferences"][0]["uid"] = "someone-else";
                          return j;
                        }(),
                        [] {
                          auto j = attachedShard(4);
                          j["metadata"]["name"] = "prometheus-other-shard-4";
                          return j;
                        }(),
                        [] {
                          auto j = attachedShard(5);
                          j["metadata"]["labels"]["operator.prometheus.io/shard"] = "05";
                          return j;
                        }(),
                        [] {
                          auto j = retainedShard(6, kPast);
                          j["metadata"]["labels"]["shardscaler.io/shardset"] = "other";
                          return j;
                        }(),
                        [] {
                          auto j = attachedShard(7);
                          j["metadata"]["labels"]["operator.prometheus.io/mode"] = "agent";
                          return j;
                        }(),
                        [] {
                          auto j = attachedShard(8);
                          j["metadata"]["ownerReferences"][0]["kind"] = "PrometheusAgent";
                          return j;
                        }(),
                        [] {
                          auto j = attachedShard(9);
                          j["metadata"]["labels"]["operator.prometheus.io/name"] = "other";
                          return j;
                        }(),
                        [] {
                          auto j = retainedShard(10, kPast);
                          j["metadata"]["labels"].erase("shardscaler.io/retained");
                          return j;
                        }(),
                    }},
       {},
       "ShardsReady",
       "AsExpected"},
  };
}

class Transition : public ::testing::TestWithParam<Row> {};

TEST_P(Transition, PlansTheStepsOfDesign3) {
  const Row& row = GetParam();
  const Plan plan = planShardSet(row.world.input());
  EXPECT_THAT(steps(plan), ElementsAreArray(row.steps)) << describe(plan);
  EXPECT_EQ(condition(plan, kConditionReady).reason, row.ready)
      << condition(plan, kConditionReady).message;
  EXPECT_EQ(condition(plan, kConditionDegraded).reason, row.degraded)
      << condition(plan, kConditionDegraded).message;
  // Level-triggered: the same observation gives the same plan.
  const Plan again = planShardSet(row.world.input());
  EXPECT_EQ(steps(again), steps(plan));
  EXPECT_EQ(again.status, plan.status);
}

INSTANTIATE_TEST_SUITE_P(Design3, Transition, ::testing::ValuesIn(rows()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace shardscaler::planner
