// The drain (docs/design.md §15): a due shard is deleted only once its data is shipped, or once
// the timeout passed under onTimeout Delete; absence of evidence is never drained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"

namespace shardscaler::retention {
namespace {

using namespace std::chrono_literals;
using testing::attachedShards;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::operator+;  // NOLINT(misc-unused-using-decls): used, the check misses operators
using testing::condition;
using testing::fixedNow;
using testing::Json;
using testing::retainedShard;
using testing::rfc3339;
using testing::shardSetJson;
using testing::steps;
using testing::targetJson;
using testing::World;

constexpr const char* kPrometheus = "http://prometheus.monitoring.svc:9090";

Json withDrain(const std::string& when, const Json& drain = Json::object()) {
  Json policy{{"shardRetentionPolicy", {{"whenScaled", when}}},
              {"ingestion", {{"prometheusURL", kPrometheus}}}};
  if (!drain.empty()) policy["shardRetentionPolicy"]["drain"] = drain;
  return policy;
}

// A shard retained (detached) with a deadline `ago` before now, with optional drain marks.
Json dueSts(int index, std::chrono::seconds ago, const Json& annotations = Json::object()) {
  Json sts = retainedShard(index, rfc3339(fixedNow() - ago));
  for (const auto& [k, v] : annotations.items()) sts["metadata"]["annotations"][k] = v;
  return sts;
}

DrainReading drained(double lag = 2) { return {.drained = true, .lag_seconds = lag}; }
DrainReading lagging(double lag) {
  return {.drained = false,
          .lag_seconds = lag,
          .reason = "pod prometheus-main-shard-2-0 lags " + std::to_string(int(lag)) + "s"};
}

TEST(PlannerDrain, DeleteWithADrainDetachesRemovedShardsInsteadOfLettingTheOperatorDeleteThem) {
  const World w{shardSetJson(2, withDrain("Delete")), targetJson(4), attachedShards(0, 4)};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan),
              ElementsAre("pause", "detach 2", "detach 3", "update shards=2 unpause any-rv"));
  // Due at once: the deadline is now.
  EXPECT_EQ(plan.actions[1].deadline->toAnnotation(), rfc3339(fixedNow()));
}

TEST(PlannerDrain, WithoutAnEndpointDeleteBehavesAsBeforeAndSaysDeletionsAreUnverified) {
  const World w{shardSetJson(2, testing::retainPolicy("Delete")), targetJson(2),
                attachedShards(0, 4)};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2", "delete 3"));
  EXPECT_EQ(plan.actions[0].events.at(0).reason, kReasonShardDeletedUnverified);
  const Condition& checked = condition(plan, api::kConditionDrainChecked);
  EXPECT_EQ(checked.status, "False");
  EXPECT_EQ(checked.reason, kReasonNoQueryEndpoint);
}

TEST(PlannerDrain, ADueShardWithoutAReadingAsksForOneAndDeletesNothing) {
  const World w{shardSetJson(2, withDrain("Retain")), targetJson(2),
                attachedShards(0, 2) + std::vector<Json>{dueSts(2, 60s)}};
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  ASSERT_EQ(plan.decision.drain_checks.size(), 1u);
  EXPECT_EQ(plan.decision.drain_checks[0].stateful_set, "prometheus-main-shard-2");
  ASSERT_TRUE(plan.requeue_after);
}

TEST(PlannerDrain, ADrainedShardIsMarkedThenDeleted) {
  World w{shardSetJson(2, withDrain("Retain")), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 60s)}};
  w.drain_readings["prometheus-main-shard-2"] = drained();
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("drained 2")) << "deleted in the round that reads it back";
  EXPECT_EQ(plan.actions[0].events.at(0).reason, kReasonShardDrained);
  ASSERT_TRUE(plan.requeue_after);
  EXPECT_LE(*plan.requeue_after, 1s);
}

// Receiver down for 5 s when the shard stopped appending: its lag froze at 5 s, under maxLag. Read
// at once, it would pass; maxLag after it became due, a queue still waiting has outgrown maxLag.
TEST(PlannerDrain, TheLagIsReadOnlyOnceTheShardHasBeenDueForMaxLag) {
  World w{shardSetJson(2, withDrain("Delete", {{"maxLagSeconds", 30}})), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 10s)}};
  w.drain_readings["prometheus-main-shard-2"] = drained(5);
  Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_TRUE(plan.decision.drain_checks.empty());
  ASSERT_TRUE(plan.requeue_after);
  EXPECT_LE(*plan.requeue_after, 20s);
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, kReasonDraining);

  w.stateful_sets.back() = dueSts(2, 30s);
  plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("drained 2"));

  // A user's condition is the user's: read at once.
  w.shard_set = shardSetJson(
      2, withDrain("Delete", {{"condition", "thanos_shipper_ok{pod=~\"$POD_REGEX\"} > 0"}}));
  w.stateful_sets.back() = dueSts(2, 1s);
  plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("drained 2"));
}

TEST(PlannerDrain, AShardMarkedDrainedIsDeletedWithoutAnotherCheck) {
  const World w{shardSetJson(2, withDrain("Retain")), targetJson(2),
                attachedShards(0, 2) +
                    std::vector<Json>{
                        dueSts(2, 60s, {{"shardscaler.io/drained-at", rfc3339(fixedNow() - 5s)}})}};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2"));
  EXPECT_TRUE(plan.decision.drain_checks.empty());
}

TEST(PlannerDrain, AnUndrainedShardIsKeptMarkedAndReportedWithItsLag) {
  World w{shardSetJson(2, withDrain("Retain")), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 60s)}};
  w.drain_readings["prometheus-main-shard-2"] = lagging(95);
  Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("draining 2"));
  EXPECT_EQ(plan.actions[0].events.at(0).reason, kReasonShardDraining);
  ASSERT_EQ(plan.status.retained_shards.size(), 1u);
  EXPECT_EQ(plan.status.retained_shards[0].phase, api::kPhaseDraining);
  EXPECT_EQ(plan.status.retained_shards[0].lag_seconds, 95);
  EXPECT_EQ(plan.status.draining_count, 1);
  ASSERT_TRUE(plan.requeue_after);
  EXPECT_LE(*plan.requeue_after, 5s);

  // Marked already: nothing to write, still not deleted.
  w.stateful_sets.back() =
      dueSts(2, 60s, {{"shardscaler.io/draining-since", rfc3339(fixedNow() - 30s)}});
  plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.status.retained_shards[0].draining_since, rfc3339(fixedNow() - 30s));
  EXPECT_EQ(condition(plan, kConditionReady).status, "True") << "the scale itself is done";
  EXPECT_EQ(condition(plan, kConditionProgressing).reason, kReasonDraining);
}

TEST(PlannerDrain, PastTheTimeoutKeepDegradesAndDeleteDeletesWithAWarning) {
  const Json marked = dueSts(2, 2h, {{"shardscaler.io/draining-since", rfc3339(fixedNow() - 2h)}});
  World keep{shardSetJson(2, withDrain("Retain", {{"timeoutSeconds", 3600}})), targetJson(2),
             attachedShards(0, 2) + std::vector<Json>{marked}};
  keep.drain_readings["prometheus-main-shard-2"] = lagging(7000);
  Plan plan = planShardSet(keep.input());
  EXPECT_TRUE(plan.actions.empty());
  const Condition& degraded = condition(plan, kConditionDegraded);
  EXPECT_EQ(degraded.status, "True");
  EXPECT_EQ(degraded.reason, kReasonDrainTimedOut);
  EXPECT_THAT(degraded.message, HasSubstr("prometheus-main-shard-2"));
  EXPECT_THAT(degraded.message, HasSubstr("lags"));

  World remove = keep;
  remove.shard_set =
      shardSetJson(2, withDrain("Retain", {{"timeoutSeconds", 3600}, {"onTimeout", "Delete"}}));
  plan = planShardSet(remove.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2"));
  EXPECT_EQ(plan.actions[0].events.at(0).type, EventType::Warning);
  EXPECT_EQ(plan.actions[0].events.at(0).reason, kReasonDrainTimedOut);
}

TEST(PlannerDrain, BeforeTheDeadlineNothingIsCheckedUnderRetain) {
  const World w{
      shardSetJson(2, withDrain("Retain")), targetJson(2),
      attachedShards(0, 2) + std::vector<Json>{retainedShard(2, rfc3339(fixedNow() + 1h))}};
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_TRUE(plan.decision.drain_checks.empty());
  EXPECT_EQ(plan.status.retained_shards[0].phase, api::kPhaseRetained);
}

TEST(PlannerDrain, AConditionPrometheusRefusesIsAnInvalidSpec) {
  World w{shardSetJson(2, withDrain("Retain", {{"condition", "up{pod=~\"$POD_REGEX\""}})),
          targetJson(2), attachedShards(0, 2) + std::vector<Json>{dueSts(2, 60s)}};
  w.drain_readings["prometheus-main-shard-2"] = {
      .reason = "bad_data (HTTP 400): parse error: unexpected end of input",
      .invalid_condition = true};
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_THAT(condition(plan, kConditionDegraded).message, HasSubstr("parse error"));
}

TEST(PlannerDrain, AConditionWithoutThePodPlaceholderIsRefused) {
  const World w{shardSetJson(2, withDrain("Retain", {{"condition", "up == 1"}})), targetJson(2),
                attachedShards(0, 2)};
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  EXPECT_THAT(condition(plan, kConditionDegraded).message, HasSubstr("$POD_REGEX"));
}

TEST(PlannerDrain, AnOptOutDeletesWithoutChecking) {
  World w{shardSetJson(2, withDrain("Retain", {{"enabled", false}})), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 60s)}};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2"));
  EXPECT_EQ(condition(plan, api::kConditionDrainChecked).reason, kReasonDrainDisabled);
}

}  // namespace
}  // namespace shardscaler::retention
