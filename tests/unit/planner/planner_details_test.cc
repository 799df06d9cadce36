// What the controller applies and publishes: exact patch bodies, preconditions, events, status,
// condition transitions and requeue times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::planner {
namespace {

using namespace testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> reasons(const std::vector<Event>& events) {
  std::vector<std::string> out;
  out.reserve(events.size());
  for (const auto& e : events) out.push_back(e.reason);
  return out;
}

TEST(PlannerPatches, PauseCarriesUidAndResourceVersion) {
  const Plan plan = planShardSet(
      World{shardSetJson(3, retainPolicy("Retain", "3d")), targetJson(5), attachedShards(0, 5)}
          .input());
  const Action& pause = only(plan, ActionType::PauseTarget);
  EXPECT_EQ(pause.object_name, "main");
  EXPECT_EQ(pause.uid, kTargetUid);
  EXPECT_EQ(pause.resource_version, "1001");
  // A target claimed before its retention was held gets the hold with the pause.
  EXPECT_EQ(pause.merge_patch, Json::parse(R"({
    "metadata": {"uid": "6f1c0a52-prom-main", "resourceVersion": "1001",
                 "annotations": {"shardscaler.io/paused-by": "main",
                                 "shardscaler.io/paused-at": "2026-11-22T10:00:00Z",
                                 "shardscaler.io/saved-shard-retention-policy": "null"}},
    "spec": {"paused": true,
             "shardRetentionPolicy": {"whenScaled": "Retain",
                                      "retain": {"retentionPeriod": "0"}}}})"));
  EXPECT_TRUE(pause.events.empty());
}

TEST(PlannerPatches, DetachHidesFromTheOperatorAndRecordsTheDeadline) {
  const Plan plan = planShardSet(
      World{shardSetJson(3, retainPolicy("Retain", "3d")), targetJson(5), attachedShards(0, 5)}
          .input());
  const Action& detach = only(plan, ActionType::DetachStatefulSet, 3);
  EXPECT_EQ(detach.object_name, "prometheus-main-shard-3");
  EXPECT_EQ(detach.uid, "sts-uid-3");
  EXPECT_EQ(detach.resource_version, "");
  ASSERT_TRUE(detach.deadline.has_value());
  EXPECT_EQ(detach.deadline->toAnnotation(), "2026-11-25T10:00:00Z");
  EXPECT_EQ(detach.merge_patch, Json::parse(R"({"metadata": {
    "uid": "sts-uid-3",
    "labels": {"operator.prometheus.io/name": null, "shardscaler.io/retained": "true",
               "shardscaler.io/shardset": "main"},
    "annotations": {"shardscaler.io/detached-labels": "{\"operator.prometheus.io/name\":\"main\"}",
                    "shardscaler.io/deletion-deadline": "2026-11-25T10:00:00Z",
                    "operator.prometheus.io/deletion-deadline": "2026-11-25T10:00:00Z",
                    "operator.prometheus.io/deletion-timestamp": "2026-11-25T10:00:00Z",
                    "shardscaler.io/detached-at": "2026-11-22T10:00:00Z",
                    "shardscaler.io/draining-since": null,
                    "shardscaler.io/drained-at": null}}})"));
  ASSERT_EQ(detach.events.size(), 1u);
  EXPECT_EQ(detach.events[0].type, EventType::Normal);
  EXPECT_EQ(detach.events[0].reason, "ShardRetained");
  EXPECT_EQ(detach.events[0].message,
            "Detached shard 3 (StatefulSet prometheus-main-shard-3) from Prometheus main; retained "
            "until 2026-11-25T10:00:00Z");
}

TEST(PlannerPatches, UpdateSetsShardsResumesAndDropsPausedBy) {
  const Plan plan = planShardSet(
      World{shardSetJson(3, retainPolicy("Retain", "3d")), pausedBy(targetJson(5), "main"),
            attachedShards(0, 3) + std::vector{retainedShard(3, "2026-11-25T10:00:00Z"),
                                               retainedShard(4, "2026-11-25T10:00:00Z")}}
          .input());
  const Action& update = only(plan, ActionType::UpdateTarget);
  EXPECT_EQ(update.uid, kTargetUid);
  // Acts on the observation in which every detach held: a target changed since is re-read. The
  // drop is stamped: the drain waits for the survivors to reload after it.
  EXPECT_EQ(update.resource_version, "1001");
  EXPECT_EQ(update.merge_patch, Json::parse(R"({
    "metadata": {"uid": "6f1c0a52-prom-main", "resourceVersion": "1001",
                 "annotations": {"shardscaler.io/paused-by": null,
                                 "shardscaler.io/paused-at": null,
                                 "shardscaler.io/scaled-down-at": "2026-11-22T10:00:00Z"}},
    "spec": {"shards": 3, "paused": false}})"));
  EXPECT_THAT(reasons(update.events), ElementsAre("TargetScaled"));
  EXPECT_EQ(update.events[0].message, "Set Prometheus main spec.shards from 5 to 3 and resumed it");
}

TEST(PlannerPatches, UpdateOfAUserPausedTargetOnlySetsShards) {
  const Plan plan = planShardSet(
      World{shardSetJson(4), pausedBy(targetJson(5), "someone"), attachedShards(0, 5)}.input());
  // (whenScaled=Delete by default: the drop is stamped for the settle time before the deletes.)
  EXPECT_EQ(only(plan, ActionType::UpdateTarget).merge_patch, Json::parse(R"({
    "metadata": {"uid": "6f1c0a52-prom-main", "resourceVersion": "1001",
                 "annotations": {"shardscaler.io/scaled-down-at": "2026-11-22T10:00:00Z"}},
    "spec": {"shards": 4}})"));
  EXPECT_THAT(condition(plan, kConditionReady).message, HasSubstr("paused by someone else"));
}

TEST(PlannerPatches, ReattachRestoresSavedLabelsAndDropsTheMarks) {
  Json sts = retainedShard(3, "2026-11-25T10:00:00Z");
  sts["metadata"]["annotations"]["shardscaler.io/detached-labels"] =
      R"({"operator.prometheus.io/name":"main","team":"obs","shardscaler.io/retained":"x","n":1})";
  const Plan plan = planShardSet(
      World{shardSetJson(4), targetJson(3), attachedShards(0, 3) + std::vector{sts}}.input());
  const Action& reattach = only(plan, ActionType::ReattachStatefulSet, 3);
  EXPECT_EQ(reattach.merge_patch, Json::parse(R"({"metadata": {
    "uid": "sts-uid-3",
    "labels": {"operator.prometheus.io/name": "main", "team": "obs",
               "shardscaler.io/retained": null, "shardscaler.io/shardset": "main"},
    "annotations": {"shardscaler.io/detached-labels": null,
                    "shardscaler.io/deletion-deadline": null,
                    "operator.prometheus.io/deletion-deadline": null,
                    "operator.prometheus.io/deletion-timestamp": null,
                    "shardscaler.io/detached-at": null,
                    "shardscaler.io/draining-since": null,
                    "shardscaler.io/drained-at": null}}})"));
  EXPECT_THAT(reasons(reattach.events), ElementsAre("ShardReattached"));
}

TEST(PlannerPatches, ReattachWithGarbageSavedLabelsStillRestoresTheName) {
  Json sts = retainedShard(3, "2026-11-25T10:00:00Z");
  sts["metadata"]["annotations"]["shardscaler.io/detached-labels"] = "{not json";
  const Plan plan = planShardSet(
      World{shardSetJson(4), targetJson(3), attachedShards(0, 3) + std::vector{sts}}.input());
  EXPECT_EQ(only(plan, ActionType::ReattachStatefulSet, 3)
                .merge_patch["metadata"]["labels"]["operator.prometheus.io/name"],
            "main");
}

TEST(PlannerPatches, DeleteCarriesUidResourceVersionAndThePassedDeadline) {
  const Plan plan = planShardSet(
      World{shardSetJson(3, retainPolicy("Retain", "3d")), targetJson(3),
            attachedShards(0, 3) + std::vector{retainedShard(4, "2026-11-21T00:00:00Z")}}
          .input());
  const Action& del = only(plan, ActionType::DeleteStatefulSet, 4);
  EXPECT_EQ(del.object_name, "prometheus-main-shard-4");
  EXPECT_EQ(del.uid, "sts-uid-4");
  EXPECT_EQ(del.resource_version, "504");
  EXPECT_TRUE(del.merge_patch.is_null());
  ASSERT_TRUE(del.deadline.has_value());
  EXPECT_EQ(del.deadline->toAnnotation(), "2026-11-21T00:00:00Z");
  ASSERT_EQ(del.events.size(), 1u);
  // The drain is off (the fixture's opt-out): deleted at the deadline.
  EXPECT_EQ(del.events[0].reason, "ShardDeleted");
  EXPECT_EQ(del.events[0].message,
            "Deleted shard 4 (StatefulSet prometheus-main-shard-4): retention deadline "
            "2026-11-21T00:00:00Z passed");
}

TEST(PlannerPatches, ReDetachedShardGetsAFreshDeadline) {
  // Detached once, labelled back by the operator: it served again, so its retention period
  // starts over when it is detached again (and the settle time with it).
  Json relabelled = retainedShard(4, "2026-11-23T00:00:00Z");
  relabelled["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
  relabelled["metadata"]["annotations"]["shardscaler.io/detached-at"] = "2026-11-20T00:00:00Z";
  const Plan plan = planShardSet(World{
      shardSetJson(3, retainPolicy("Retain", "3d")), pausedBy(targetJson(5), "main"),
      attachedShards(0, 4) +
          std::vector{relabelled}}.input());
  EXPECT_EQ(only(plan, ActionType::DetachStatefulSet, 3).deadline->toAnnotation(),
            "2026-11-25T10:00:00Z");
  const Action& again = only(plan, ActionType::DetachStatefulSet, 4);
  EXPECT_EQ(again.deadline->toAnnotation(), "2026-11-25T10:00:00Z");
  EXPECT_EQ(again.merge_patch["metadata"]["annotations"]["shardscaler.io/detached-at"],
            "2026-11-22T10:00:00Z");
}

TEST(PlannerPatches, DeadlineFromTheTargetsRetention) {
  const auto deadline = [](const Json& target_spec) {
    const Plan plan =
        planShardSet(World{shardSetJson(2, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}),
                           targetJson(3, target_spec), attachedShards(0, 3)}
                         .input());
    return only(plan, ActionType::DetachStatefulSet, 2).deadline->toAnnotation();
  };
  EXPECT_EQ(deadline({{"retention", "15d"}}), "2026-12-07T10:00:00Z");
  EXPECT_EQ(deadline({}), "2026-11-23T10:00:00Z");                           // 24h
  EXPECT_EQ(deadline({{"retentionSize", "50GB"}}), "0001-01-01T00:00:00Z");  // size-only: never
  EXPECT_EQ(deadline({{"shardRetentionPolicy", {{"retain", {{"retentionPeriod", "1h30m"}}}}}}),
            "2026-11-22T11:30:00Z");
  EXPECT_EQ(deadline({{"shardRetentionPolicy", {{"retain", {{"retentionPeriod", "0"}}}}}}),
            "0001-01-01T00:00:00Z");
}

TEST(PlannerEvents, ClampAndRoundingAccompanyTheShardsWrite) {
  const Json topology{
      {"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b", "c"}}}}}}};
  const Plan plan = planShardSet(
      World{shardSetJson(20, {{"maxShards", 8}}), targetJson(3, topology), attachedShards(0, 3)}
          .input());
  const Action& update = only(plan, ActionType::UpdateTarget);
  EXPECT_THAT(reasons(update.events),
              ElementsAre("TargetScaled", "ScaleClamped", "RoundedToZoneMultiple"));
  EXPECT_EQ(update.events[1].message, "spec.shards 20 is above maxShards 8; using 8");
  EXPECT_EQ(
      update.events[2].message,
      "8 shards rounded down to 6, a multiple of the 3 topology zones (rounding up to 9 would "
      "pass maxShards 8)");
  EXPECT_EQ(plan.decision.desired->want, 6);
  // Once there, no write and no repeated events; the note stays in Ready.
  const Plan there = planShardSet(
      World{shardSetJson(20, {{"maxShards", 8}}), targetJson(6, topology), attachedShards(0, 6)}
          .input());
  EXPECT_TRUE(there.actions.empty());
  EXPECT_TRUE(there.events.empty());
  EXPECT_THAT(condition(there, kConditionReady).message, HasSubstr("rounded down to 6"));
}

TEST(PlannerEvents, ProblemsAreAnnouncedOnTransitionsOnly) {
  World w{shardSetJson(3), targetJson(3),
          attachedShards(0, 3) + std::vector{retainedShard(3, "next tuesday")}};
  const Plan first = planShardSet(w.input());
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].type, EventType::Warning);
  EXPECT_EQ(first.events[0].reason, "InvalidDeletionTimestamp");
  EXPECT_THAT(first.events[0].message, HasSubstr("prometheus-main-shard-3"));

  // The status written back: the next reconcile says nothing new.
  for (const auto& c : first.status.conditions)
    w.shard_set["status"]["conditions"].push_back(toJson(c));
  w.now += std::chrono::minutes(5);
  const Plan second = planShardSet(w.input());
  EXPECT_TRUE(second.events.empty());
  EXPECT_EQ(condition(second, kConditionDegraded).last_transition_time, "2026-11-22T10:00:00Z");

  // A different problem is news again.
  w.stateful_sets.back()["metadata"]["annotations"]["operator.prometheus.io/deletion-timestamp"] =
      "soon";
  EXPECT_EQ(planShardSet(w.input()).events.size(), 1u);
}

TEST(PlannerEvents, TargetNotFoundAndInvalidSpecAreWarnings) {
  const Plan missing = planShardSet(World{shardSetJson(3), std::nullopt, {}}.input());
  ASSERT_EQ(missing.events.size(), 1u);
  EXPECT_EQ(missing.events[0].type, EventType::Warning);
  EXPECT_EQ(missing.events[0].reason, "TargetNotFound");
  EXPECT_EQ(missing.events[0].message, "Prometheus main not found in namespace monitoring");
  EXPECT_EQ(missing.status.selector, "");
  EXPECT_FALSE(missing.status.target_shards.has_value());

  const Plan invalid =
      planShardSet(World{shardSetJson(3, {{"minShards", 4},
                                          {"maxShards", 2},
                                          {"shardRetentionPolicy", {{"whenScaled", "Keep"}}}}),
                         targetJson(3), attachedShards(0, 3)}
                       .input());
  ASSERT_EQ(invalid.events.size(), 1u);
  EXPECT_EQ(invalid.events[0].reason, "InvalidSpec");
  EXPECT_EQ(invalid.events[0].message,
            "invalid spec: spec.shardRetentionPolicy.whenScaled: must be Retain or Delete, got "
            "\"Keep\"; spec.maxShards: must not be below spec.minShards (2 < 4)");
  EXPECT_EQ(invalid.decision.mode, PlanMode::InvalidSpec);
}

// The CRD's enum keeps other kinds out; a ShardSet stored before the CRD had it is still refused.
TEST(PlannerEvents, AnUnknownTargetKindIsInvalidAndWritesNothing) {
  const Plan plan =
      planShardSet(World{shardSetJson(1, {{"targetRef", {{"kind", "Thanos"}, {"name", "main"}}}}),
                         targetJson(3), attachedShards(0, 3)}
                       .input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  ASSERT_EQ(plan.events.size(), 1u);
  EXPECT_EQ(plan.events[0].message,
            "invalid spec: spec.targetRef.kind: must be Prometheus or PrometheusAgent, got "
            "\"Thanos\"");
  EXPECT_TRUE(plan.actions.empty());
}

TEST(PlannerEvents, InvalidSpecSaysWhyTheTargetStaysPaused) {
  // Without the guard, a shard kept by detaching it must be out of the operator's view before
  // the target resumes: the settle time.
  World w{shardSetJson(-5, retainPolicy("Retain", "3d")), pausedBy(targetJson(3), "main"),
          attachedShards(0, 4)};
  w.guarded = false;
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("detach 3"));
  EXPECT_THAT(condition(plan, kConditionDegraded).message,
              HasSubstr("Prometheus main kept paused for the settle time after detaching shards "
                        "above its shard count"));
  EXPECT_EQ(plan.requeue_after, std::chrono::seconds(10));
}

TEST(PlannerStatus, CountsActiveShardsAndSelectsOnePodEach) {
  Json deleting = attachedShard(1);
  deleting["metadata"]["deletionTimestamp"] = "2026-11-22T09:00:00Z";
  const Plan plan =
      planShardSet(World{shardSetJson(4), targetJson(4),
                         std::vector{attachedShard(0), deleting, attachedShard(2), attachedShard(5),
                                     retainedShard(6, "2026-11-25T10:00:00Z")}}
                       .input());
  EXPECT_EQ(plan.status.shards, 2);
  EXPECT_EQ(plan.status.target_shards, 4);
  EXPECT_EQ(plan.status.selector,
            "operator.prometheus.io/name=main,statefulset.kubernetes.io/pod-name in "
            "(prometheus-main-0,prometheus-main-shard-2-0)");
  EXPECT_THAT(
      plan.status.retained_shards,
      ElementsAre(api::RetainedShard{6, "prometheus-main-shard-6", "2026-11-25T10:00:00Z"}));
  EXPECT_EQ(condition(plan, kConditionReady).reason, "WaitingForShards");
  EXPECT_EQ(condition(plan, kConditionReady).message, "2 of 4 shards active");
  // Shard 5 is beyond the target (whenScaled defaults to Delete): not active, deleted.
  EXPECT_THAT(steps(plan), ElementsAre("delete 5"));
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, "DeletingShards");
}

TEST(PlannerStatus, SelectorNamesShardZeroBeforeAnyExists) {
  const Plan plan = planShardSet(World{shardSetJson(2), targetJson(2), {}}.input());
  EXPECT_EQ(plan.status.shards, 0);
  EXPECT_EQ(plan.status.selector,
            "operator.prometheus.io/name=main,statefulset.kubernetes.io/pod-name in "
            "(prometheus-main-0)");
  EXPECT_EQ(condition(plan, kConditionReady).reason, "WaitingForShards");
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, "WaitingForOperator");
  EXPECT_EQ(condition(plan, kConditionProgressing).message,
            "0 of 2 shards active; waiting for the operator");
}

TEST(PlannerStatus, AgentNamesAndMode) {
  Json ss = shardSetJson(2, {{"targetRef", {{"kind", "PrometheusAgent"}}},
                             {"shardRetentionPolicy", {{"whenScaled", "Retain"}}}});
  const std::vector<Json> sts = {attachedShard(0, {.kind = TargetKind::PrometheusAgent}),
                                 attachedShard(1, {.kind = TargetKind::PrometheusAgent}),
                                 attachedShard(2, {.kind = TargetKind::PrometheusAgent})};
  const Plan plan = planShardSet(
      World{ss, targetJson(3, {}, {.kind = TargetKind::PrometheusAgent}), sts}.input());
  EXPECT_THAT(steps(plan), ElementsAre("pause", "detach 2", "update shards=2 unpause any-rv"));
  EXPECT_EQ(only(plan, ActionType::DetachStatefulSet).object_name, "prom-agent-main-shard-2");
  EXPECT_EQ(plan.status.selector,
            "operator.prometheus.io/name=main,statefulset.kubernetes.io/pod-name in "
            "(prom-agent-main-0,prom-agent-main-shard-1-0,prom-agent-main-shard-2-0)");
  // Agents have no retention fields: 24h.
  EXPECT_EQ(only(plan, ActionType::DetachStatefulSet).deadline->toAnnotation(),
            "2026-11-23T10:00:00Z");
}

TEST(PlannerStatus, JsonShape) {
  World w{shardSetJson(3), targetJson(3),
          attachedShards(0, 3) + std::vector{retainedShard(3, "0001-01-01T00:00:00Z")}};
  w.drain_by_default = true;
  const Plan plan = planShardSet(w.input());
  const Json j = api::toJson(plan.status);
  EXPECT_EQ(j["observedGeneration"], 4);
  EXPECT_EQ(j["shards"], 3);
  EXPECT_EQ(j["targetShards"], 3);
  EXPECT_EQ(j["retainedShards"],
            Json::parse(R"([{"index": 3, "statefulSet": "prometheus-main-shard-3",
                             "deletionTimestamp": "0001-01-01T00:00:00Z", "phase": "Retained"}])"));
  ASSERT_EQ(j["conditions"].size(), 5u);
  EXPECT_EQ(j["conditions"][0],
            Json::parse(R"({"type": "Ready", "status": "True", "reason": "ShardsReady",
      "message": "3 of 3 shards active, 1 retained", "lastTransitionTime": "2026-11-22T10:00:00Z",
      "observedGeneration": 4})"));
  EXPECT_EQ(j["conditions"][1]["type"], "Progressing");
  EXPECT_EQ(j["conditions"][1]["status"], "False");
  EXPECT_EQ(j["conditions"][2]["type"], "Degraded");
  EXPECT_EQ(j["conditions"][2]["status"], "False");
  // No query endpoint: the drain reads the shards' own pods, and the status says so.
  EXPECT_EQ(j["conditions"][3]["type"], "DrainChecked");
  EXPECT_EQ(j["conditions"][3]["reason"], "DrainsChecked");
  EXPECT_NE(j["conditions"][3]["message"].get<std::string>().find("as read from its own pods"),
            std::string::npos);
  EXPECT_EQ(j["conditions"][4]["type"], "OtherWriters");
  EXPECT_EQ(j["conditions"][4]["status"], "False");
}

TEST(PlannerStatus, TransitionTimeMovesOnlyWithStatus) {
  World w{shardSetJson(3), targetJson(3), attachedShards(0, 3)};
  w.shard_set["status"]["conditions"] =
      Json::array({{{"type", "Ready"},
                    {"status", "True"},
                    {"reason", "ShardsReady"},
                    {"message", "old text"},
                    {"lastTransitionTime", "2026-01-01T00:00:00Z"}},
                   {{"type", "Progressing"},
                    {"status", "True"},
                    {"reason", "ScalingUp"},
                    {"lastTransitionTime", "2026-01-01T00:00:00Z"}}});
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(condition(plan, kConditionReady).last_transition_time, "2026-01-01T00:00:00Z");
  EXPECT_EQ(condition(plan, kConditionReady).message, "3 of 3 shards active, 0 retained");
  EXPECT_EQ(condition(plan, kConditionProgressing).last_transition_time, "2026-11-22T10:00:00Z");
  EXPECT_EQ(condition(plan, kConditionDegraded).last_transition_time, "2026-11-22T10:00:00Z");
}

TEST(PlannerRequeue, AtTheNextDeadline) {
  using std::chrono::seconds;
  const auto requeue = [](const std::vector<Json>& retained, int64_t want = 3) {
    return planShardSet(World{shardSetJson(want, retainPolicy("Retain", "3d")), targetJson(3),
                              attachedShards(0, 3) + retained}
                            .input())
        .requeue_after;
  };
  EXPECT_EQ(requeue({retainedShard(3, "2026-11-25T10:00:00Z")}), seconds(3 * 86400 + 1));
  EXPECT_EQ(
      requeue({retainedShard(3, "2026-11-25T10:00:00Z"), retainedShard(4, "2026-11-22T10:01:00Z")}),
      seconds(61));
  EXPECT_EQ(requeue({retainedShard(3, "2026-11-22T10:00:00Z")}),
            seconds(1));  // at: one more second
  EXPECT_EQ(requeue({retainedShard(3, "0001-01-01T00:00:00Z")}), std::nullopt);
  EXPECT_EQ(requeue({retainedShard(3, "garbage")}), std::nullopt);
  EXPECT_EQ(requeue({retainedShard(3, "2026-11-20T00:00:00Z")}), std::nullopt);  // deleted now
  EXPECT_EQ(requeue({}), std::nullopt);
}

TEST(PlannerDescribe, ListsDecisionAndSteps) {
  const std::string text = describe(planShardSet(
      World{shardSetJson(3, retainPolicy("Retain", "3d")), targetJson(5), attachedShards(0, 5)}
          .input()));
  EXPECT_THAT(text, HasSubstr("whenScaled: Retain (from ShardSet)"));
  EXPECT_THAT(text, HasSubstr("kept until 2026-11-25T10:00:00Z"));
  EXPECT_THAT(text, HasSubstr("operator retention: not held yet: written with the next claim or "
                              "pause\n"));
  EXPECT_THAT(text, HasSubstr("1. pause Prometheus main, holding its spec.shardRetentionPolicy at "
                              "Retain while claimed (its own saved)\n"));
  EXPECT_THAT(text, HasSubstr("3. detach shard 4 (StatefulSet prometheus-main-shard-4), retained "
                              "until 2026-11-25T10:00:00Z\n"));
  // Without the guard the same observation only pauses, and says what it waits for.
  World fallback{shardSetJson(3, retainPolicy("Retain", "3d")), targetJson(5),
                 attachedShards(0, 5)};
  fallback.guarded = false;
  const std::string waiting = describe(planShardSet(fallback.input()));
  EXPECT_THAT(waiting, HasSubstr("1. pause Prometheus main, holding"));
  EXPECT_THAT(waiting, HasSubstr("waiting for: the operator to acknowledge the pause\n"));
  EXPECT_THAT(waiting, Not(HasSubstr("2. ")));
}

}  // namespace
}  // namespace shardscaler::planner
