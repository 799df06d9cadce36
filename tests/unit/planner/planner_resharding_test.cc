// spec.resharding in the planner (docs/design/resharding.md): the scrape classes ride on the target
// write that sets spec.shards, never before or after it, with the read's resourceVersion; the
// switch on and off is one write of its own, with its Event; a release takes shardscaler's rules
// away with the claim; and the Resharding condition says what is covered.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/resharding/low_churn_rules.h"
#include "shardscaler/resharding/scrape_classes.h"

namespace shardscaler::planner {
namespace {

using testing::attachedShards;
using testing::condition;
using ::testing::HasSubstr;
using testing::Json;
using testing::only;
using testing::pausedBy;
using testing::retainPolicy;
using testing::shardSetJson;
using testing::steps;
using testing::targetJson;
using testing::World;

Json lowChurn(const std::string& when = "Retain") {
  Json spec = retainPolicy(when, "1h");
  spec["resharding"] = "LowChurn";
  return spec;
}

std::vector<resharding::ScrapeObject> staticObjects() {
  Json sc{{"metadata", {{"namespace", "monitoring"}, {"name", "static"}}},
          {"spec", {{"staticConfigs", Json::array({{{"targets", Json::array()}}})}}}};
  for (int i = 0; i < 200; ++i) {
    sc["spec"]["staticConfigs"][0]["targets"].push_back("127.0.1." + std::to_string(i) + ":9");
  }
  return {resharding::readScrapeObject(resharding::ScrapeKind::ScrapeConfig, sc)};
}

PlanInput withObjects(const World& w) {
  PlanInput in = w.input();
  in.scrape_objects = staticObjects();
  return in;
}

// The target as it stands once the plan's update with scrape classes went through.
Json applied(Json target, const Plan& plan) {
  for (const Action& a : plan.actions) {
    if (a.type != ActionType::UpdateTarget || !a.merge_patch.contains("spec")) continue;
    target["spec"].merge_patch(a.merge_patch["spec"]);
  }
  return target;
}

const Json* classesIn(const Action& a) {
  const auto spec = a.merge_patch.find("spec");
  if (spec == a.merge_patch.end()) return nullptr;
  const auto classes = spec->find("scrapeClasses");
  return classes == spec->end() ? nullptr : &*classes;
}

int32_t tableShards(const Json& classes) {
  auto rules = resharding::parseRules(resharding::ownRules(classes));
  return rules ? rules->table.shards : -1;
}

TEST(PlannerResharding, SwitchingOnIsOneWriteOfTheClassesWithTheReadsVersionAndAnEvent) {
  const World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  const Plan plan = planShardSet(withObjects(w));
  ASSERT_EQ(plan.actions.size(), 1u) << describe(plan);
  const Action& update = plan.actions[0];
  EXPECT_EQ(update.type, ActionType::UpdateTarget);
  EXPECT_EQ(update.resource_version, "1001");
  EXPECT_EQ(update.merge_patch["metadata"]["resourceVersion"], "1001");
  const Json* classes = classesIn(update);
  ASSERT_NE(classes, nullptr);
  EXPECT_EQ(tableShards(*classes), 3);
  EXPECT_FALSE(update.merge_patch["spec"].contains("shards"));
  ASSERT_EQ(update.events.size(), 1u);
  EXPECT_EQ(update.events[0].reason, "LowChurnEnabled");
  const Condition& c = condition(plan, api::kConditionResharding);
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "LowChurn");
  EXPECT_THAT(c.message, HasSubstr("ScrapeConfig monitoring/static"));
  // Writing the classes alone changes what no shard serves: still Ready.
  EXPECT_EQ(condition(plan, kConditionReady).status, "True");

  // Once written, the next plan is at rest, also from the caches (no objects read).
  World after = w;
  after.target = applied(*w.target, plan);
  PlanInput cached = after.input();
  cached.shard_set.conditions = plan.status.conditions;
  const Plan rest = planShardSet(cached);
  EXPECT_TRUE(rest.actions.empty()) << describe(rest);
  EXPECT_FALSE(rest.decision.resharding_needs_objects);
  EXPECT_EQ(condition(rest, api::kConditionResharding).message, c.message);
}

TEST(PlannerResharding, FromTheCachesAPlanThatWouldSwitchOnAsksForTheObjects) {
  const World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  const Plan plan = planShardSet(w.input());
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_TRUE(plan.decision.resharding_needs_objects);
  EXPECT_EQ(condition(plan, api::kConditionResharding).reason, "ScrapeObjectsUnread");
}

TEST(PlannerResharding, WithTheGuardTheTableWaitsForTheRoundAfterThePauseThenRidesWithShards) {
  World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  // Low churn already in force for 3 shards; then kubectl scale to 2 (Retain: a detach).
  const Plan on = planShardSet(withObjects(w));
  w.target = applied(*w.target, on);
  ASSERT_EQ(tableShards(w.target->at("spec")["scrapeClasses"]), 3);
  w.shard_set["spec"]["shards"] = 2;
  const Plan pausing = planShardSet(withObjects(w));
  EXPECT_EQ(steps(pausing), (std::vector<std::string>{"pause", "detach 2"})) << describe(pausing);
  EXPECT_EQ(condition(pausing, api::kConditionResharding).status, "Unknown");

  w.target = pausedBy(*w.target, "main");
  w.target->at("metadata")["resourceVersion"] = "1002";
  w.stateful_sets = attachedShards(0, 2);
  w.stateful_sets.push_back(testing::retainedShard(2, "2026-11-25T10:00:00Z"));
  const Plan scale = planShardSet(withObjects(w));
  const Action& update = only(scale, ActionType::UpdateTarget);
  EXPECT_EQ(update.merge_patch["spec"]["shards"], 2) << describe(scale);
  EXPECT_EQ(update.merge_patch["spec"]["paused"], false);
  EXPECT_EQ(update.resource_version, "1002");
  const Json* classes = classesIn(update);
  ASSERT_NE(classes, nullptr);
  EXPECT_EQ(tableShards(*classes), 2);
  EXPECT_EQ(condition(scale, api::kConditionResharding).status, "True");
}

TEST(PlannerResharding, AScaleUpWithoutAPauseWritesShardsAndTableTogether) {
  World w{shardSetJson(2, lowChurn()), targetJson(2), attachedShards(0, 2)};
  const Plan on = planShardSet(withObjects(w));
  w.target = applied(*w.target, on);
  w.shard_set["spec"]["shards"] = 3;
  const Plan scale = planShardSet(withObjects(w));
  EXPECT_EQ(steps(scale), (std::vector<std::string>{"update shards=3"})) << describe(scale);
  const Json* classes = classesIn(scale.actions[0]);
  ASSERT_NE(classes, nullptr);
  EXPECT_EQ(tableShards(*classes), 3);
  EXPECT_EQ(scale.actions[0].resource_version, "1001");
}

TEST(PlannerResharding, WithoutTheGuardTheTableRidesOnTheUpdateThatSetsShards) {
  World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  w.guarded = false;
  const Plan on = planShardSet(withObjects(w));
  w.target = applied(*w.target, on);
  ASSERT_EQ(tableShards(w.target->at("spec")["scrapeClasses"]), 3);
  w.shard_set["spec"]["shards"] = 2;
  // Paused, acknowledged, shard 2 detached long enough ago: the update lowers spec.shards.
  w.target = pausedBy(*w.target, "main");
  w.target->at("metadata")["annotations"]["shardscaler.io/paused-at"] = "2026-11-22T09:00:00Z";
  w.stateful_sets = attachedShards(0, 2);
  w.stateful_sets.push_back(testing::retainedShard(2, "2026-11-25T10:00:00Z"));
  const Plan plan = planShardSet(withObjects(w));
  const Action& update = only(plan, ActionType::UpdateTarget);
  EXPECT_EQ(update.merge_patch["spec"]["shards"], 2) << describe(plan);
  const Json* classes = classesIn(update);
  ASSERT_NE(classes, nullptr);
  EXPECT_EQ(tableShards(*classes), 2);
}

TEST(PlannerResharding, SwitchingOffRemovesTheRulesAndSaysTargetsMoveOnce) {
  World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  const Plan on = planShardSet(withObjects(w));
  w.target = applied(*w.target, on);
  w.shard_set["spec"]["resharding"] = "Operator";
  PlanInput in = withObjects(w);
  in.shard_set.conditions = on.status.conditions;
  const Plan off = planShardSet(in);
  ASSERT_EQ(off.actions.size(), 1u) << describe(off);
  const Json* classes = classesIn(off.actions[0]);
  ASSERT_NE(classes, nullptr);
  EXPECT_TRUE(classes->is_null());
  ASSERT_EQ(off.actions[0].events.size(), 1u);
  EXPECT_EQ(off.actions[0].events[0].reason, "LowChurnDisabled");
  EXPECT_THAT(off.actions[0].events[0].message, HasSubstr("move to another shard once"));
  const Condition& c = condition(off, api::kConditionResharding);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "OperatorSharding");
}

TEST(PlannerResharding, AReleaseTakesTheRulesAwayWithTheClaim) {
  World w{shardSetJson(3, lowChurn()), targetJson(3), attachedShards(0, 3)};
  const Plan on = planShardSet(withObjects(w));
  w.target = applied(*w.target, on);
  w.purpose = PlanPurpose::Release;
  const Plan release = planShardSet(withObjects(w));
  const Action& update = only(release, ActionType::UpdateTarget);
  EXPECT_TRUE(update.merge_patch["metadata"]["annotations"]["shardscaler.io/claimed-by"].is_null());
  const Json* classes = classesIn(update);
  ASSERT_NE(classes, nullptr);
  EXPECT_TRUE(classes->is_null());
  EXPECT_EQ(update.resource_version, "1001");
}

TEST(PlannerResharding, WithoutLowChurnNothingIsSaidOrWritten) {
  const World w{shardSetJson(3, retainPolicy("Retain", "1h")), targetJson(3), attachedShards(0, 3)};
  const Plan plan = planShardSet(withObjects(w));
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(k8s::findStatusCondition(plan.status.conditions, api::kConditionResharding), nullptr);
}

TEST(PlannerResharding, AnUnknownModeIsAnInvalidSpec) {
  Json spec = retainPolicy("Retain", "1h");
  spec["resharding"] = "Consistent";
  const World w{shardSetJson(3, spec), targetJson(3), attachedShards(0, 3)};
  const Plan plan = planShardSet(w.input());
  EXPECT_EQ(plan.decision.mode, PlanMode::InvalidSpec);
  EXPECT_THAT(condition(plan, kConditionReady).message, HasSubstr("spec.resharding"));
}

}  // namespace
}  // namespace shardscaler::planner
