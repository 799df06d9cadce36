// The drain (docs/design/drain.md): a due shard is deleted only once its data is shipped, or once
// the timeout passed under onTimeout Delete; absence of evidence is never drained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"

namespace shardscaler::planner {
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
  policy["shardRetentionPolicy"]["drain"] = drain;
  return policy;
}

// A shard retained (detached) with a deadline `ago` before now, with optional drain marks.
Json dueSts(int index, std::chrono::seconds ago, const Json& annotations = Json::object()) {
  Json sts = retainedShard(index, rfc3339(fixedNow() - ago));
  for (const auto& [k, v] : annotations.items()) sts["metadata"]["annotations"][k] = v;
  return sts;
}

DrainReading drained(double lag = 2) { return {.drained = true, .lag_seconds = lag}; }
// A query that failed: nothing was read of the shard.
DrainReading failedReading() {
  return {.drained = false,
          .reason = "the lag query failed: transport error: connection refused",
          .failed = true};
}
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

// Found by issue review: without a URL, a Delete scale-down deleted the removed shards with their
// unshipped data (the operator did, as plain sharding). The drain is on for every ShardSet: it
// reads the shards' own pods.
TEST(PlannerDrain, WithoutAnEndpointDeleteStillDetachesAndDrainsFromThePods) {
  World w{shardSetJson(2, testing::retainPolicy("Delete")), targetJson(4), attachedShards(0, 4)};
  w.drain_by_default = true;
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan),
              ElementsAre("pause", "detach 2", "detach 3", "update shards=2 unpause any-rv"));
  ASSERT_TRUE(plan.decision.drain);
  EXPECT_TRUE(plan.decision.drain->enabled);
  EXPECT_EQ(plan.decision.drain->prometheus_url, "");
  const Condition& checked = condition(plan, api::kConditionDrainChecked);
  EXPECT_EQ(checked.status, "True");
  EXPECT_EQ(checked.reason, kReasonDrainsChecked);
}

TEST(PlannerDrain, OnlyAnOptOutLetsTheOperatorDeleteTheRemovedShards) {
  Json policy = testing::retainPolicy("Delete");
  policy["shardRetentionPolicy"]["drain"] = {{"enabled", false}};
  const World w{shardSetJson(2, policy), targetJson(2), attachedShards(0, 4)};
  const Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2", "delete 3"));
  EXPECT_EQ(condition(plan, api::kConditionDrainChecked).reason, kReasonDrainDisabled);
}

TEST(PlannerDrain, AConditionWithoutAUrlIsAnInvalidSpec) {
  Json policy = testing::retainPolicy("Delete");
  policy["shardRetentionPolicy"]["drain"] = {
      {"condition", "x{namespace=\"$NAMESPACE\",pod=~\"$POD_REGEX\"} == 0"}};
  const World w{shardSetJson(2, policy), targetJson(2), attachedShards(0, 2)};
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  ASSERT_FALSE(plan.decision.problems.empty());
  EXPECT_EQ(plan.decision.problems[0].field, "spec.shardRetentionPolicy.drain.condition");
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

// A shard that became due long before its first check (shardscaler was down, the ShardSet was
// invalid, an adopted deadline was later than ours) gets the whole timeout from that check.
TEST(PlannerDrain, TheTimeoutCountsFromTheFirstCheckNotFromTheDeadline) {
  const Json policy = withDrain("Delete", {{"timeoutSeconds", 3600}, {"onTimeout", "Delete"}});
  World w{shardSetJson(2, policy), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 5h)}};
  w.drain_readings["prometheus-main-shard-2"] = lagging(18000);
  Plan plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("draining 2")) << "deleted on its first reading";
  ASSERT_TRUE(plan.requeue_after);
  EXPECT_LE(*plan.requeue_after, 5s);

  w.stateful_sets.back() =
      dueSts(2, 5h, {{"shardscaler.io/draining-since", rfc3339(fixedNow() - 59min)}});
  plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << describe(plan);

  w.stateful_sets.back() =
      dueSts(2, 5h, {{"shardscaler.io/draining-since", rfc3339(fixedNow() - 1h)}});
  plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2"));
}

// A failed query says nothing about the shard: it neither starts the timeout nor ends it.
TEST(PlannerDrain, AFailedReadingNeverCountsTowardTheTimeout) {
  const Json policy = withDrain("Delete", {{"timeoutSeconds", 3600}, {"onTimeout", "Delete"}});
  World w{shardSetJson(2, policy), targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(2, 5h)}};
  w.drain_readings["prometheus-main-shard-2"] = failedReading();
  Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << describe(plan);
  EXPECT_EQ(plan.status.retained_shards.at(0).phase, api::kPhaseDraining);
  EXPECT_THAT(condition(plan, kConditionProgressing).message, HasSubstr("query failed"));

  w.stateful_sets.back() =
      dueSts(2, 5h, {{"shardscaler.io/draining-since", rfc3339(fixedNow() - 2h)}});
  plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << "deleted on a failed query: " << describe(plan);

  // A reading that finds it still undrained past the timeout deletes it.
  w.drain_readings["prometheus-main-shard-2"] = lagging(7200);
  plan = planShardSet(w.input());
  EXPECT_THAT(steps(plan), ElementsAre("delete 2"));
}

// Deadlines at the ends of what RFC 3339 and a nanosecond time_point hold neither wrap nor end a
// wait early: a deadline in year 1 (not the zero "never") or before 1677 is long past, one in 9999
// or past 2262 far ahead, and a draining-since near the end of the range never times out.
TEST(PlannerDrain, ExtremeDeadlinesAndMarksNeitherWrapNorEndAWaitEarly) {
  const Json policy = withDrain("Delete", {{"timeoutSeconds", 3600}, {"onTimeout", "Delete"}});
  for (const std::string deadline :
       {"0001-01-01T00:00:01Z", "1500-06-01T00:00:00Z", "1677-09-21T00:12:44Z"}) {
    SCOPED_TRACE(deadline);
    World w{shardSetJson(2, policy), targetJson(2),
            attachedShards(0, 2) + std::vector<Json>{retainedShard(2, deadline)}};
    Plan plan = planShardSet(w.input());
    EXPECT_TRUE(plan.actions.empty()) << describe(plan);
    ASSERT_EQ(plan.decision.drain_checks.size(), 1u) << "long due: its lag is read at once";
    w.drain_readings["prometheus-main-shard-2"] = lagging(60);
    plan = planShardSet(w.input());
    EXPECT_THAT(steps(plan), ElementsAre("draining 2")) << "timed out on its first reading";
    ASSERT_TRUE(plan.requeue_after);
    EXPECT_GT(*plan.requeue_after, 0s);
    EXPECT_LE(*plan.requeue_after, 5s);
  }
  for (const std::string deadline : {"9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z"}) {
    SCOPED_TRACE(deadline);
    const World w{shardSetJson(2, policy), targetJson(2),
                  attachedShards(0, 2) + std::vector<Json>{retainedShard(2, deadline)}};
    const Plan plan = planShardSet(w.input());
    EXPECT_TRUE(plan.actions.empty()) << describe(plan);
    EXPECT_TRUE(plan.decision.drain_checks.empty());
    // Not a busy loop: a wait that does not fit is as long as it can be, never negative.
    ASSERT_TRUE(plan.requeue_after.has_value());
    EXPECT_GT(*plan.requeue_after, 24h * 365 * 200);
  }
  // Marked draining 30 minutes before the last instant a time_point holds: adding the timeout
  // must not wrap into the past.
  World w{shardSetJson(2, policy), targetJson(2),
          attachedShards(0, 2) +
              std::vector<Json>{
                  dueSts(2, 5h, {{"shardscaler.io/draining-since", "2262-04-11T23:17:16Z"}})}};
  w.drain_readings["prometheus-main-shard-2"] = lagging(60);
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << describe(plan);
}

// What a drain check needs of the planner: each due shard's detach and its configuration's
// queues, and the surviving shards whose reload it reads.
TEST(PlannerDrain, ACheckCarriesTheDetachTheQueuesAndTheSurvivors) {
  Json target = targetJson(2);
  target["spec"]["replicas"] = 2;
  target["spec"]["remoteWrite"] =
      Json::array({{{"url", "http://a/api/v1/write"}}, {{"url", "http://b/api/v1/write"}}});
  const World w{shardSetJson(2, withDrain("Delete")), target,
                attachedShards(0, 2) +
                    std::vector<Json>{dueSts(
                        2, 60s, {{"shardscaler.io/detached-at", rfc3339(fixedNow() - 60s)}})}};
  const Plan plan = planShardSet(w.input());
  ASSERT_EQ(plan.decision.drain_checks.size(), 1u);
  const auto& check = plan.decision.drain_checks[0];
  EXPECT_EQ(check.detached_at, fixedNow() - 60s);
  EXPECT_EQ(check.remote_writes, 2);
  ASSERT_EQ(plan.decision.drain_survivors.size(), 2u);
  EXPECT_EQ(plan.decision.drain_survivors[0].stateful_set, "prometheus-main");
  EXPECT_EQ(plan.decision.drain_survivors[1].stateful_set, "prometheus-main-shard-1");
  EXPECT_EQ(plan.decision.drain_survivors[1].replicas, 2);
}

// The survivors scrape a removed shard's targets only once they reloaded the configuration the
// operator wrote for the lower count. A user condition is read at once, so without this wait a
// shard could go a second after its detach, leaving its targets unscraped until the reload.
TEST(PlannerDrain, ADrainedShardGoesOnlyOnceTheSurvivorsReloadedOrTheFloorPassed) {
  const auto detached = fixedNow() - 2s;
  World w{shardSetJson(2, withDrain("Delete", {{"condition", "up{pod=~\"$POD_REGEX\"} == 1"}})),
          targetJson(2),
          attachedShards(0, 2) + std::vector<Json>{dueSts(
                                     2, 2s, {{"shardscaler.io/detached-at", rfc3339(detached)}})}};
  (*w.target)["metadata"]["annotations"]["shardscaler.io/scaled-down-at"] = rfc3339(detached);
  DrainReading reading = drained();
  w.drain_readings["prometheus-main-shard-2"] = reading;
  Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty()) << "not read: " << describe(plan);
  EXPECT_THAT(condition(plan, kConditionProgressing).message,
              HasSubstr("waiting for the surviving shards to reload their configuration"));
  ASSERT_TRUE(plan.requeue_after);
  EXPECT_LE(*plan.requeue_after, 5s);

  reading.survivors_reloaded_at = detached - 30s;  // an earlier reload: the old configuration
  w.drain_readings["prometheus-main-shard-2"] = reading;
  EXPECT_TRUE(planShardSet(w.input()).actions.empty());

  reading.survivors_reloaded_at = detached + 1s;
  w.drain_readings["prometheus-main-shard-2"] = reading;
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("drained 2"));

  // Never seen to reload (not scraped, a reload that keeps failing): the floor after leaving.
  reading.survivors_reloaded_at.reset();
  w.drain_readings["prometheus-main-shard-2"] = reading;
  w.now = detached + 3min - 1s;
  EXPECT_TRUE(planShardSet(w.input()).actions.empty());
  w.now = detached + 3min;
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("drained 2"));

  // The floor is shardscaler's --drain-reload-floor: here 10 minutes, for slow kubelets.
  w.reload_floor = 10min;
  w.now = detached + 10min - 1s;
  EXPECT_TRUE(planShardSet(w.input()).actions.empty());
  EXPECT_THAT(condition(planShardSet(w.input()), kConditionProgressing).message,
              HasSubstr("at most 10m after it left the count"));
  w.now = detached + 10min;
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("drained 2"));
}

// The same wait holds a deletion the timeout allows: it leaves the same targets unscraped.
TEST(PlannerDrain, ATimedOutDeletionAlsoWaitsForTheSurvivors) {
  const auto lowered = fixedNow() - 10s;
  World w{
      shardSetJson(2, withDrain("Delete", {{"timeoutSeconds", 10}, {"onTimeout", "Delete"}})),
      targetJson(2),
      attachedShards(0, 2) +
          std::vector<Json>{dueSts(2, 2h,
                                   {{"shardscaler.io/detached-at", rfc3339(fixedNow() - 2h)},
                                    {"shardscaler.io/draining-since", rfc3339(fixedNow() - 1h)}})}};
  (*w.target)["metadata"]["annotations"]["shardscaler.io/scaled-down-at"] = rfc3339(lowered);
  DrainReading reading = lagging(3600);
  w.drain_readings["prometheus-main-shard-2"] = reading;
  EXPECT_TRUE(planShardSet(w.input()).actions.empty());
  reading.survivors_reloaded_at = lowered + 1s;
  w.drain_readings["prometheus-main-shard-2"] = reading;
  EXPECT_THAT(steps(planShardSet(w.input())), ElementsAre("delete 2"));
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
}  // namespace shardscaler::planner
