// Status diffing: a reconcile writes status only when it changed, and then once.
#include "controller_fixture.h"

namespace shardscaler::controller::testing {
namespace {

std::vector<k8s::testing::Call> writes(const FakeKubeClient& fake) {
  auto calls = fake.calls();
  std::erase_if(calls, [](const auto& c) {
    return c.verb == Verb::Get || c.verb == Verb::List || c.verb == Verb::Watch;
  });
  return calls;
}

TEST_F(ControllerTest, AReconcileThatChangesNothingWritesNothing) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcileToStatus().result, k8s::ReconcileResult::Success);
  EXPECT_EQ(statusWrites().size(), 1U) << describe(fake_.calls());

  const ReconcileOutcome again = reconcile();
  EXPECT_EQ(again.result, k8s::ReconcileResult::Success) << again.error;
  EXPECT_TRUE(statusWrites().empty()) << describe(fake_.calls());
  EXPECT_TRUE(writes(fake_).empty()) << describe(fake_.calls());
}

TEST_F(ControllerTest, ASpecChangeWritesStatusExactlyOnce) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);

  // A new generation that plans the same: only status.observedGeneration moves.
  ASSERT_TRUE(fake_.patch(api::shardSets(), kNs, "main", k8s::PatchType::Merge,
                          {{"spec", {{"minShards", 1}}}}));
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  const auto status = statusWrites();
  ASSERT_EQ(status.size(), 1U) << describe(fake_.calls());
  EXPECT_EQ((*shardSet())["status"]["observedGeneration"], 2);
  EXPECT_EQ(writes(fake_).size(), 1U) << describe(fake_.calls());
}

}  // namespace
}  // namespace shardscaler::controller::testing
