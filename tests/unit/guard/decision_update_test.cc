// The UPDATE rule of the shard guard: only shardscaler puts operator.prometheus.io/name back on a
// retained_ shard.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guard_fixtures.h"
#include "shardscaler/guard/decision.h"

namespace shardscaler::guard {
namespace {

using namespace testing;
using ::testing::HasSubstr;

class GuardUpdate : public ::testing::Test {
 protected:
  void SetUp() override {
    live_.shard_set = LiveRead::found(shardSetJson(2));
    live_.target_object = LiveRead::found(targetJson(2));
    config_.self_user = "system:serviceaccount:monitoring:shardscaler";
  }
  Verdict judge(const AdmissionRequest& request) {
    return decide(request, live_, fixedNow(), config_);
  }

  FakeLiveObjects live_;
  GuardConfig config_;
  const Json retained_ = retainedShard(3, "2026-11-25T10:00:00Z");
};

TEST_F(GuardUpdate, OperatorRelabellingARetainedShardIsDenied) {
  const Verdict v = judge(updateRequest(retained_, relabelled(retained_)));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleReattach);
  EXPECT_EQ(v.message,
            "shardscaler guard: rule Reattach: this UPDATE puts operator.prometheus.io/name back "
            "on StatefulSet monitoring/prometheus-main-shard-3 (shard 3 of Prometheus main), which "
            "is retained by ShardSet main until 2026-11-25T10:00:00Z; only shardscaler re-attaches "
            "retained shards (scale ShardSet main up instead). To override, act as a member of "
            "group system:masters (--guard-exempt-groups).");
  // No target read: re-attaching is refused whatever the shard count.
  EXPECT_EQ(live_.reads, std::vector<std::string>{"shardset monitoring/main"});
}

TEST_F(GuardUpdate, ReattachAfterTheDeadlineIsStillShardscalersJob) {
  const Json expired = retainedShard(3, "2026-01-01T00:00:00Z");
  EXPECT_EQ(judge(updateRequest(expired, relabelled(expired))).reason, kRuleReattach);
  const Json never = retainedShard(3, "0001-01-01T00:00:00Z");
  EXPECT_THAT(judge(updateRequest(never, relabelled(never))).message,
              HasSubstr("with no deadline (0001-01-01T00:00:00Z means never)"));
}

TEST_F(GuardUpdate, UpdatesThatReattachNothingPassWithoutReads) {
  Json annotated = retained_;
  annotated["metadata"]["annotations"]["note"] = "kept for the audit";
  EXPECT_EQ(judge(updateRequest(retained_, annotated)).reason, kAllowNotReattach);
  Json finalizing = retained_;  // the garbage collector finishing a foreground deletion
  finalizing["metadata"]["finalizers"] = Json::array();
  EXPECT_EQ(judge(updateRequest(retained_, finalizing)).reason, kAllowNotReattach);
  // An active shard's ordinary update (it already has the name label).
  Json active = activeShard(1);
  Json rolled = active;
  rolled["spec"]["replicas"] = 3;
  EXPECT_EQ(judge(updateRequest(active, rolled)).reason, kAllowNotReattach);
  // shardscaler's detach: the label goes away, nothing comes back.
  EXPECT_EQ(judge(updateRequest(activeShard(3), retained_)).reason, kAllowNotReattach);
  // Unmanaged.
  EXPECT_EQ(judge(updateRequest(unmanagedStatefulSet(), unmanagedStatefulSet())).reason,
            kAllowUnmanaged);
  EXPECT_TRUE(live_.reads.empty());
}

TEST_F(GuardUpdate, ShardscalerAndExemptUsersMayReattach) {
  AdmissionRequest own = updateRequest(retained_, relabelled(retained_), {config_.self_user, {}});
  own.field_manager = "shardscaler";
  EXPECT_EQ(judge(own).reason, kAllowOwnWrite);
  EXPECT_EQ(judge(updateRequest(retained_, relabelled(retained_), admin())).reason, kAllowExempt);
  EXPECT_TRUE(live_.reads.empty());
}

// The sidecar install's hole: the operator ran as shardscaler's user, and the guard let its
// re-attach through as shardscaler's own. Only shardscaler's field manager makes it its own.
TEST_F(GuardUpdate, TheOperatorSharingShardscalersUserMayNotReattach) {
  AdmissionRequest shared =
      updateRequest(retained_, relabelled(retained_), {config_.self_user, {}});
  shared.field_manager = "PrometheusOperator";
  Verdict v = judge(shared);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleReattach);
  shared.field_manager = "";  // a client that names no manager
  EXPECT_EQ(judge(shared).reason, kRuleReattach);
  // shardscaler's field manager from another user is not shardscaler either.
  AdmissionRequest other = updateRequest(retained_, relabelled(retained_), operatorUser());
  other.field_manager = "shardscaler";
  EXPECT_EQ(judge(other).reason, kRuleReattach);
}

TEST_F(GuardUpdate, ReleasedShardMayBeReattachedByAnyone) {
  live_.shard_set = LiveRead::absent();
  EXPECT_EQ(judge(updateRequest(retained_, relabelled(retained_))).reason, kAllowShardSetGone);
}

TEST_F(GuardUpdate, FailedShardSetReadDenies) {
  live_.shard_set = LiveRead::failed("ServerError (500): etcd");
  const Verdict v = judge(updateRequest(retained_, relabelled(retained_)));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("so the UPDATE of StatefulSet"));
}

TEST_F(GuardUpdate, CleanupAfterTheTargetIsNotBlocked) {
  live_.target_object = LiveRead::absent();
  EXPECT_EQ(judge(updateRequest(retained_, relabelled(retained_), garbageCollector())).reason,
            kAllowCleanup);
}

TEST_F(GuardUpdate, ReviewWithoutTheNewObjectIsDenied) {
  AdmissionRequest r = updateRequest(retained_, relabelled(retained_));
  r.object = nullptr;
  const Verdict v = judge(r);
  EXPECT_EQ(v.reason, kRuleIncompleteReview);
  EXPECT_THAT(v.message, HasSubstr("carries no object"));
}

}  // namespace
}  // namespace shardscaler::guard
