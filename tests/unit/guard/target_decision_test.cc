#include "shardscaler/guard/target_decision.h"

#include <gmock/gmock.h>

#include "guard_fixtures.h"

namespace shardscaler::guard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace testing;  // NOLINT(google-build-using-namespace): the fixtures

const GuardConfig kConfig{.self_user = "system:serviceaccount:monitoring:shardscaler"};
UserInfo selfUser() { return {kConfig.self_user, {"system:serviceaccounts"}}; }
UserInfo hpaController() {
  return {"system:serviceaccount:kube-system:horizontal-pod-autoscaler",
          {"system:serviceaccounts"}};
}

Json claimed(Json target, const std::string& holder = "main") {
  target["metadata"]["annotations"][std::string(api::kClaimedByAnnotation)] = holder;
  return target;
}

// An UPDATE of Prometheus main itself, from `before` to `after`.
AdmissionRequest targetUpdate(const Json& before, const Json& after, UserInfo user = plainUser(),
                              std::string field_manager = "kubectl-client-side-apply") {
  AdmissionRequest r;
  r.uid = "uid-target";
  r.group = "monitoring.coreos.com";
  r.version = "v1";
  r.resource = "prometheuses";
  r.ns = kNamespace;
  r.name = "main";
  r.operation = Operation::Update;
  r.user = std::move(user);
  r.field_manager = std::move(field_manager);
  r.old_object = before;
  r.object = after;
  return r;
}

Json scaleObject(int64_t replicas) {
  return {{"apiVersion", "autoscaling/v1"},
          {"kind", "Scale"},
          {"metadata", {{"name", "main"}, {"namespace", kNamespace}}},
          {"spec", {{"replicas", replicas}}}};
}

// An UPDATE of prometheuses/main/scale, as `kubectl scale` or an HPA sends it.
AdmissionRequest scaleUpdate(int64_t from, int64_t to, UserInfo user = hpaController()) {
  AdmissionRequest r = targetUpdate(scaleObject(from), scaleObject(to), std::move(user), "");
  r.sub_resource = "scale";
  return r;
}

TEST(TargetDecision, RefusesLoweringAClaimedTargetsCountAndSaysHowToScale) {
  FakeLiveObjects live;
  live.shard_set = LiveRead::found(shardSetJson(3));
  const Verdict v = decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(1))),
                                       live, kConfig);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleShardCountOwnedByShardSet);
  EXPECT_THAT(v.message, HasSubstr("rule ShardCountOwnedByShardSet"));
  EXPECT_THAT(v.message, HasSubstr("from 3 to 1"));
  EXPECT_THAT(v.message, HasSubstr("kubectl scale shardset/main -n monitoring --replicas=1"));
  EXPECT_THAT(live.reads, ElementsAre("shardset monitoring/main"));
}

TEST(TargetDecision, RefusesAScaleSubresourceWriteOnAClaimedTargetAfterReadingTheClaim) {
  FakeLiveObjects live;
  live.target_object = LiveRead::found(claimed(targetJson(4)));
  live.shard_set = LiveRead::found(shardSetJson(4));
  const Verdict v = decideTargetUpdate(scaleUpdate(4, 2), live, kConfig);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleShardCountOwnedByShardSet);
  EXPECT_THAT(live.reads,
              ElementsAre("target monitoring/Prometheus/main", "shardset monitoring/main"));
  // Raising is refused as well: the ShardSet would put the count back.
  EXPECT_FALSE(decideTargetUpdate(scaleUpdate(4, 6), live, kConfig).allowed);
}

TEST(TargetDecision, AllowsAnUpdateThatKeepsTheCountWithoutAnyRead) {
  FakeLiveObjects live;
  Json after = claimed(targetJson(3));
  after["spec"]["retention"] = "30d";
  const Verdict v = decideTargetUpdate(
      targetUpdate(claimed(targetJson(3)), after, operatorUser(), "PrometheusOperator"), live,
      kConfig);
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.reason, kAllowNoGuardedChange);
  EXPECT_THAT(live.reads, IsEmpty());
  // An absent spec.shards is the operator's 1.
  EXPECT_TRUE(
      decideTargetUpdate(targetUpdate(claimed(targetJson(std::nullopt)), claimed(targetJson(1))),
                         live, kConfig)
          .allowed);
  // So are 0 and a negative count, through the target or its scale.
  EXPECT_TRUE(decideTargetUpdate(targetUpdate(claimed(targetJson(0)), claimed(targetJson(1))), live,
                                 kConfig)
                  .allowed);
  EXPECT_TRUE(decideTargetUpdate(scaleUpdate(1, 0), live, kConfig).allowed);
  EXPECT_TRUE(decideTargetUpdate(scaleUpdate(-2, 1), live, kConfig).allowed);
  EXPECT_THAT(live.reads, IsEmpty());
}

TEST(TargetDecision, ReadsAZeroOrNegativeCountAsTheOperatorsOneShard) {
  FakeLiveObjects live;
  live.shard_set = LiveRead::found(shardSetJson(3));
  const Verdict v = decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(0))),
                                       live, kConfig);
  EXPECT_FALSE(v.allowed);
  EXPECT_THAT(v.message, HasSubstr("from 3 to 1"));
  EXPECT_THAT(v.message, HasSubstr("--replicas=1"));
}

TEST(TargetDecision, AllowsShardscalersOwnWriteButNotItsUserWithAnotherFieldManager) {
  FakeLiveObjects live;
  live.shard_set = LiveRead::found(shardSetJson(3));
  const auto before = claimed(targetJson(5));
  const auto after = claimed(targetJson(3));
  EXPECT_EQ(
      decideTargetUpdate(targetUpdate(before, after, selfUser(), "shardscaler"), live, kConfig)
          .reason,
      kAllowOwnWrite);
  // The sidecar install: the operator may run as shardscaler's user.
  EXPECT_FALSE(
      decideTargetUpdate(targetUpdate(before, after, selfUser(), "kubectl-scale"), live, kConfig)
          .allowed);
}

TEST(TargetDecision, AllowsUnclaimedTargetsExemptUsersAndLeftOverClaims) {
  FakeLiveObjects live;
  EXPECT_EQ(decideTargetUpdate(targetUpdate(targetJson(3), targetJson(1)), live, kConfig).reason,
            kAllowUnmanaged);
  EXPECT_THAT(live.reads, IsEmpty()) << "an unclaimed target is judged from the review alone";
  EXPECT_EQ(
      decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(1)), admin()),
                         live, kConfig)
          .reason,
      kAllowExempt);
  // The claim names a ShardSet that is gone (deleted while shardscaler was down), or one that
  // targets another object.
  live.shard_set = LiveRead::absent();
  EXPECT_EQ(decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(1))), live,
                               kConfig)
                .reason,
            kAllowShardSetGone);
  live.shard_set = LiveRead::found(
      shardSetJson(3, {{"targetRef", {{"kind", "PrometheusAgent"}, {"name", "main"}}}}));
  EXPECT_TRUE(decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(1))), live,
                                 kConfig)
                  .allowed);
  // A Scale of a target that does not exist, or carries no claim.
  live.target_object = LiveRead::absent();
  EXPECT_EQ(decideTargetUpdate(scaleUpdate(3, 1), live, kConfig).reason, kAllowUnmanaged);
  live.target_object = LiveRead::found(targetJson(3));
  EXPECT_EQ(decideTargetUpdate(scaleUpdate(3, 1), live, kConfig).reason, kAllowUnmanaged);
}

TEST(TargetDecision, RefusesWhenTheClaimCannotBeChecked) {
  FakeLiveObjects live;
  live.target_object = LiveRead::failed("Timeout: the server was too slow (long detail)");
  const Verdict scale = decideTargetUpdate(scaleUpdate(3, 1), live, kConfig);
  EXPECT_FALSE(scale.allowed);
  EXPECT_EQ(scale.reason, kRuleReadFailed);
  EXPECT_THAT(scale.message, HasSubstr("(Timeout)"));
  EXPECT_THAT(scale.message, ::testing::Not(HasSubstr("long detail")));
  live.shard_set = LiveRead::found(Json{{"spec", {{"shards", "three"}}}});
  EXPECT_EQ(decideTargetUpdate(targetUpdate(claimed(targetJson(3)), claimed(targetJson(1))), live,
                               kConfig)
                .reason,
            kRuleReadFailed);
}

TEST(TargetDecision, LeavesStatusWritesOtherOperationsAndOtherResourcesAlone) {
  FakeLiveObjects live;
  AdmissionRequest status = targetUpdate(claimed(targetJson(3)), claimed(targetJson(1)));
  status.sub_resource = "status";
  EXPECT_EQ(decideTargetUpdate(status, live, kConfig).reason, kAllowNotGuarded);
  AdmissionRequest del = targetUpdate(claimed(targetJson(3)), nullptr);
  del.operation = Operation::Delete;
  EXPECT_EQ(decideTargetUpdate(del, live, kConfig).reason, kAllowNotGuarded);
  EXPECT_THAT(live.reads, IsEmpty());
  EXPECT_FALSE(isTargetReview(deleteRequest(activeShard(1))));
  AdmissionRequest agent = scaleUpdate(2, 1);
  agent.resource = "prometheusagents";
  EXPECT_TRUE(isTargetReview(agent));
  live.target_object = LiveRead::found(claimed(targetJson(2)));
  live.shard_set = LiveRead::found(
      shardSetJson(2, {{"targetRef", {{"kind", "PrometheusAgent"}, {"name", "main"}}}}));
  EXPECT_FALSE(decideTargetUpdate(agent, live, kConfig).allowed);
  EXPECT_EQ(live.reads.front(), "target monitoring/PrometheusAgent/main");
}

}  // namespace
}  // namespace shardscaler::guard
