// The PlanApplier's preconditions: what it sends carries the plan's uid and resourceVersion, and a
// precondition that failed is reported for a re-plan, not retried.
#include <gtest/gtest.h>

#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"

#include "controller_fixture.h"

namespace shardscaler::controller::testing {
namespace {

planner::Plan deletePlan(const Json& sts, const std::string& resource_version) {
  planner::Action action;
  action.type = planner::ActionType::DeleteStatefulSet;
  action.object_name = sts["metadata"]["name"];
  action.uid = sts["metadata"]["uid"];
  action.resource_version = resource_version;
  action.summary = "delete " + action.object_name;
  action.events.push_back({planner::EventType::Normal, "ShardDeleted", "deleted"});
  planner::Plan plan;
  plan.actions.push_back(std::move(action));
  return plan;
}

class PlanApplierTest : public ::testing::Test {
 protected:
  ApplyOutcome apply(const planner::Plan& plan) {
    PlanApplier applier(fake_, events_, telemetry::LogContext({{"key", kKey}}));
    return applier.apply(plan, prometheuses(), kNs, InvolvedObject{.name = "main"});
  }
  FakeKubeClient fake_;
  RecordingEvents events_;
};

TEST_F(PlanApplierTest, ADeleteCarriesTheUidAndResourceVersionPreconditions) {
  const Json sts = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  const ApplyOutcome outcome = apply(deletePlan(sts, sts["metadata"]["resourceVersion"]));
  EXPECT_FALSE(outcome.error) << outcome.error->describe();
  EXPECT_EQ(outcome.applied, 1U);
  const auto removes = fake_.calls({.verb = Verb::Remove});
  ASSERT_EQ(removes.size(), 1U);
  EXPECT_EQ(removes[0].delete_options.precondition_uid, sts["metadata"]["uid"]);
  EXPECT_EQ(removes[0].delete_options.precondition_resource_version,
            sts["metadata"]["resourceVersion"]);
  EXPECT_EQ(removes[0].delete_options.propagation_policy, "Foreground");
  EXPECT_FALSE(fake_.find(k8s::resources::statefulSets(), kNs, stsName(1)));
  EXPECT_TRUE(events_.has("ShardDeleted"));
}

TEST_F(PlanApplierTest, AStalePreconditionDeletesNothingIsNotRetriedAndAsksForAReplan) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  // Someone changed it after the plan read it.
  ASSERT_TRUE(fake_.patch(k8s::resources::statefulSets(), kNs, stsName(1), k8s::PatchType::Merge,
                          {{"spec", {{"replicas", 2}}}}));
  const ApplyOutcome outcome = apply(deletePlan(planned, planned["metadata"]["resourceVersion"]));
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->kind, k8s::ErrorKind::Conflict);
  EXPECT_TRUE(outcome.needsReplan());
  EXPECT_FALSE(outcome.isPermanent());
  EXPECT_EQ(outcome.applied, 0U);
  EXPECT_EQ(fake_.calls({.verb = Verb::Remove}).size(), 1U);
  EXPECT_TRUE(fake_.find(k8s::resources::statefulSets(), kNs, stsName(1)));
  EXPECT_FALSE(events_.has("ShardDeleted"));
}

TEST_F(PlanApplierTest, ADeleteOfAStatefulSetRecreatedUnderTheSameNameIsRefused) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  fake_.erase(k8s::resources::statefulSets(), kNs, stsName(1));
  fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));  // a new uid
  const ApplyOutcome outcome = apply(deletePlan(planned, ""));
  ASSERT_TRUE(outcome.error);
  EXPECT_TRUE(outcome.needsReplan()) << outcome.error->describe();
  EXPECT_TRUE(fake_.find(k8s::resources::statefulSets(), kNs, stsName(1)));
}

TEST_F(PlanApplierTest, AShardAlreadyGoneCountsAsDeleted) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  fake_.erase(k8s::resources::statefulSets(), kNs, stsName(1));
  const ApplyOutcome outcome = apply(deletePlan(planned, ""));
  EXPECT_FALSE(outcome.error);
  EXPECT_EQ(outcome.applied, 1U);
}

}  // namespace
}  // namespace shardscaler::controller::testing
