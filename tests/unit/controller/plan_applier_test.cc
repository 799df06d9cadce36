// The PlanApplier's preconditions: what it sends carries the plan's uid and resourceVersion, and a
// precondition that failed is reported for a re-plan, not retried; adjacent StatefulSet writes go
// at once, within a cap.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"
#include "shardscaler/planner/naming.h"

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
    PlanApplier applier(fake_, events_, base::LogContext({{"key", kKey}}), beside_);
    return applier.apply(plan, planner::targetResource(planner::TargetKind::Prometheus), kNs,
                         InvolvedObject{.name = "main"});
  }
  FakeKubeClient fake_;
  RecordingEvents events_;
  k8s::TaskPool beside_{PlanApplier::kMaxWritesInFlight - 1};
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
  EXPECT_FALSE(fake_.find(k8s::resources::statefulSets(), kNs, shardName(1)));
  EXPECT_TRUE(events_.has("ShardDeleted"));
}

TEST_F(PlanApplierTest, AStalePreconditionDeletesNothingIsNotRetriedAndAsksForAReplan) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  // Someone changed it after the plan read it.
  ASSERT_TRUE(fake_.patch(k8s::resources::statefulSets(), kNs, shardName(1), k8s::PatchType::Merge,
                          {{"spec", {{"replicas", 2}}}}));
  const ApplyOutcome outcome = apply(deletePlan(planned, planned["metadata"]["resourceVersion"]));
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.error->kind, k8s::ErrorKind::Conflict);
  EXPECT_TRUE(outcome.needsReplan());
  EXPECT_FALSE(outcome.isPermanent());
  EXPECT_EQ(outcome.applied, 0U);
  EXPECT_EQ(fake_.calls({.verb = Verb::Remove}).size(), 1U);
  EXPECT_TRUE(fake_.find(k8s::resources::statefulSets(), kNs, shardName(1)));
  EXPECT_FALSE(events_.has("ShardDeleted"));
}

TEST_F(PlanApplierTest, ADeleteOfAStatefulSetRecreatedUnderTheSameNameIsRefused) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  fake_.erase(k8s::resources::statefulSets(), kNs, shardName(1));
  fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));  // a new uid
  const ApplyOutcome outcome = apply(deletePlan(planned, ""));
  ASSERT_TRUE(outcome.error);
  EXPECT_TRUE(outcome.needsReplan()) << outcome.error->describe();
  EXPECT_TRUE(fake_.find(k8s::resources::statefulSets(), kNs, shardName(1)));
}

TEST_F(PlanApplierTest, AShardAlreadyGoneCountsAsDeleted) {
  const Json planned = fake_.put(k8s::resources::statefulSets(), statefulSetJson(1, "owner"));
  fake_.erase(k8s::resources::statefulSets(), kNs, shardName(1));
  const ApplyOutcome outcome = apply(deletePlan(planned, ""));
  EXPECT_FALSE(outcome.error);
  EXPECT_EQ(outcome.applied, 1U);
}

TEST_F(PlanApplierTest, AdjacentStatefulSetWritesGoAtOnceButNoMoreThanTheCap) {
  // A first claim labels every shard: ten writes, sent side by side but never more at once than
  // the client keeps connections for.
  planner::Plan plan;
  for (int i = 0; i < 10; ++i) {
    fake_.put(k8s::resources::statefulSets(), statefulSetJson(i, "owner"));
    planner::Action action;
    action.type = planner::ActionType::LabelStatefulSet;
    action.object_name = shardName(i);
    action.merge_patch = {{"metadata", {{"labels", {{"shardscaler.io/shardset", "main"}}}}}};
    action.summary = "label " + action.object_name;
    plan.actions.push_back(std::move(action));
  }
  std::mutex mutex;
  int in_flight = 0;
  int most = 0;
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::Patch) return;
    {
      std::lock_guard lock(mutex);
      most = std::max(most, ++in_flight);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard lock(mutex);
    --in_flight;
  });
  const ApplyOutcome outcome = apply(plan);
  fake_.setBeforeCall(nullptr);
  EXPECT_FALSE(outcome.error) << outcome.error->describe();
  EXPECT_EQ(outcome.applied, 10U);
  for (int i = 0; i < 10; ++i) {
    auto sts = fake_.find(k8s::resources::statefulSets(), kNs, shardName(i));
    ASSERT_TRUE(sts);
    EXPECT_EQ((*sts)["metadata"]["labels"].value("shardscaler.io/shardset", ""), "main");
  }
  EXPECT_GE(most, 2);
  EXPECT_LE(most, static_cast<int>(PlanApplier::kMaxWritesInFlight));
}

}  // namespace
}  // namespace shardscaler::controller::testing
