// The UPDATE rules of the shard guard: only shardscaler puts operator.prometheus.io/name back on a
// retained shard, and only shardscaler changes what a later DELETE is judged by (update-then-
// delete); the operator's ordinary updates of active shards pass without a read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

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

TEST_F(GuardUpdate, UpdatesThatChangeNothingGuardedPassWithoutReads) {
  Json annotated = retained_;
  annotated["metadata"]["annotations"]["note"] = "kept for the audit";
  EXPECT_EQ(judge(updateRequest(retained_, annotated)).reason, kAllowNoGuardedChange);
  Json finalizing = retained_;  // the garbage collector finishing a foreground deletion
  finalizing["metadata"]["finalizers"] = Json::array();
  EXPECT_EQ(judge(updateRequest(retained_, finalizing)).reason, kAllowNoGuardedChange);
  // An active shard's ordinary update (it already has the name label).
  Json active = activeShard(1);
  Json rolled = active;
  rolled["spec"]["replicas"] = 3;
  rolled["metadata"]["labels"]["team"] = "a";
  EXPECT_EQ(judge(updateRequest(active, rolled)).reason, kAllowNoGuardedChange);
  // Unmanaged, and a StatefulSet that becomes managed (shardscaler labels its active shards).
  EXPECT_EQ(judge(updateRequest(unmanagedStatefulSet(), unmanagedStatefulSet())).reason,
            kAllowUnmanaged);
  Json unlabelled = activeShard(1);
  unlabelled["metadata"]["labels"].erase("shardscaler.io/shardset");
  EXPECT_EQ(judge(updateRequest(unlabelled, activeShard(1))).reason, kAllowUnmanaged);
  EXPECT_TRUE(live_.reads.empty());
}

// What the operator's updateStatefulSet sends for an active shard (pkg/k8s/k8s.go mergeMetadata,
// v0.93.0): the live labels and annotations without the operator.prometheus.io/ ones, overlaid
// with its own; shardscaler.io/* kept as they were, its own labels rewritten to the same values.
TEST_F(GuardUpdate, TheOperatorsOrdinaryUpdateOfAnActiveShardPasses) {
  const Json live = activeShard(2);
  Json merged = live;
  merged["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
  merged["metadata"]["labels"]["operator.prometheus.io/shard"] = "2";
  merged["metadata"]["labels"]["operator.prometheus.io/mode"] = "server";
  merged["metadata"]["annotations"] = {{"prometheus-operator-input-hash", "1234"}};
  merged["spec"]["template"] = {{"metadata", {{"annotations", {{"rollout", "2"}}}}}};
  const Verdict v = judge(updateRequest(live, merged, operatorUser()));
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.reason, kAllowNoGuardedChange);
  EXPECT_TRUE(live_.reads.empty());
}

// Each step a user with `patch statefulsets` could take to get a guarded shard deleted after all:
// refused unless shardscaler or an exempt identity takes it.
struct UpdateThenDeleteCase {
  std::string what;
  Json old_object;
  std::function<void(Json&)> change;
  std::string_view rule;
  std::string message_part;
};

TEST_F(GuardUpdate, ChangesThatWouldLetALaterDeletePassAreRefused) {
  const Json active = activeShard(1);
  const Json retained = retained_;
  const std::vector<UpdateThenDeleteCase> cases = {
      {"shard index 999", active,
       [](Json& o) { o["metadata"]["labels"]["operator.prometheus.io/shard"] = "999"; },
       kRuleGuardedMetadata, "label operator.prometheus.io/shard from \"1\" to \"999\""},
      {"shard index removed", active,
       [](Json& o) { o["metadata"]["labels"].erase("operator.prometheus.io/shard"); },
       kRuleGuardedMetadata, "label operator.prometheus.io/shard from \"1\" to none"},
      {"ShardSet label removed (released by hand)", active,
       [](Json& o) { o["metadata"]["labels"].erase("shardscaler.io/shardset"); },
       kRuleGuardedMetadata, "label shardscaler.io/shardset from \"main\" to none"},
      {"ShardSet label moved to a ShardSet that does not exist", active,
       [](Json& o) { o["metadata"]["labels"]["shardscaler.io/shardset"] = "gone"; },
       kRuleGuardedMetadata, "label shardscaler.io/shardset from \"main\" to \"gone\""},
      {"detached by hand", active,
       [](Json& o) {
         o["metadata"]["labels"].erase("operator.prometheus.io/name");
         o["metadata"]["labels"]["shardscaler.io/retained"] = "true";
         o["metadata"]["annotations"]["operator.prometheus.io/deletion-timestamp"] =
             "2026-01-01T00:00:00Z";
       },
       kRuleGuardedMetadata,
       "label shardscaler.io/retained from none to \"true\", annotation "
       "operator.prometheus.io/deletion-timestamp from none to \"2026-01-01T00:00:00Z\""},
      {"deadline moved back", retained,
       [](Json& o) {
         o["metadata"]["annotations"]["operator.prometheus.io/deletion-timestamp"] =
             "2026-11-01T00:00:00Z";
       },
       kRuleGuardedMetadata,
       "annotation operator.prometheus.io/deletion-timestamp from \"2026-11-25T10:00:00Z\" to "
       "\"2026-11-01T00:00:00Z\""},
      {"deadline removed", retained,
       [](Json& o) {
         o["metadata"]["annotations"].erase("operator.prometheus.io/deletion-timestamp");
       },
       kRuleGuardedMetadata, "annotation operator.prometheus.io/deletion-timestamp from"},
      {"drain timeout moved back", retained,
       [](Json& o) {
         o["metadata"]["annotations"]["shardscaler.io/draining-since"] = "2026-01-01T00:00:00Z";
       },
       kRuleGuardedMetadata,
       "annotation shardscaler.io/draining-since from none to \"2026-01-01T00:00:00Z\""},
      {"re-attach, step one: retained label removed", retained,
       [](Json& o) { o["metadata"]["labels"].erase("shardscaler.io/retained"); },
       kRuleGuardedMetadata, "label shardscaler.io/retained from \"true\" to none"},
      {"re-attach in one step", retained,
       [](Json& o) {
         o["metadata"]["labels"].erase("shardscaler.io/retained");
         o["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
       },
       kRuleReattach, "this UPDATE puts operator.prometheus.io/name back"},
      {"the operator's stale re-attach", retained,
       [](Json& o) { o["metadata"]["labels"]["operator.prometheus.io/name"] = "main"; },
       kRuleReattach, "this UPDATE puts operator.prometheus.io/name back"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Json changed = c.old_object;
    c.change(changed);
    for (const UserInfo& user : {plainUser(), operatorUser()}) {
      const Verdict v = judge(updateRequest(c.old_object, changed, user));
      EXPECT_FALSE(v.allowed) << user.username;
      EXPECT_EQ(v.reason, c.rule) << user.username;
      EXPECT_THAT(v.message, HasSubstr(c.message_part)) << user.username;
      EXPECT_THAT(v.message, HasSubstr("To override, act as a member of group system:masters"));
    }
    // shardscaler's own write (its detach, re-attach, labels) and an exempt user pass, unread.
    live_.reads.clear();
    AdmissionRequest own = updateRequest(c.old_object, changed, {config_.self_user, {}});
    own.field_manager = "shardscaler";
    EXPECT_EQ(judge(own).reason, kAllowOwnWrite);
    EXPECT_EQ(judge(updateRequest(c.old_object, changed, admin())).reason, kAllowExempt);
    EXPECT_TRUE(live_.reads.empty());
  }
  EXPECT_EQ(judge(updateRequest(active, active)).reason, kAllowNoGuardedChange);
}

TEST_F(GuardUpdate, TheGuardedMetadataMessageNamesTheShardAndTheWayOut) {
  Json changed = activeShard(1);
  changed["metadata"]["labels"]["operator.prometheus.io/shard"] = "999";
  const Verdict v = judge(updateRequest(activeShard(1), changed, plainUser()));
  EXPECT_EQ(v.message,
            "shardscaler guard: rule GuardedMetadata: this UPDATE changes label "
            "operator.prometheus.io/shard from \"1\" to \"999\" of StatefulSet "
            "monitoring/prometheus-main-shard-1 (shard 1 of Prometheus main), which the guard "
            "reads to decide whether the StatefulSet may be deleted; only shardscaler changes them "
            "(scale ShardSet main instead, or delete the ShardSet to release its shards). To "
            "override, act as a member of group system:masters (--guard-exempt-groups).");
  EXPECT_EQ(live_.reads, std::vector<std::string>{"shardset monitoring/main"});
}

// A value the client chose is repeated short and printable: a forged review cannot make the
// message (and the log line) carry its bytes.
TEST_F(GuardUpdate, ValuesAreRepeatedShortAndPrintable) {
  Json changed = activeShard(1);
  changed["metadata"]["labels"]["operator.prometheus.io/shard"] =
      "\x1b[31m" + std::string(10000, 'x');
  const Verdict v = judge(updateRequest(activeShard(1), changed, plainUser()));
  EXPECT_EQ(v.reason, kRuleGuardedMetadata);
  EXPECT_LT(v.message.size(), 800u);
  EXPECT_THAT(v.message, HasSubstr("\"?[31mxxxx"));
  EXPECT_THAT(v.message, HasSubstr("...(9941 more bytes)"));
  EXPECT_EQ(v.message.find('\x1b'), std::string::npos);
}

TEST_F(GuardUpdate, ReleasedShardsMayBeChangedByAnyone) {
  live_.shard_set = LiveRead::absent();
  Json changed = activeShard(1);
  changed["metadata"]["labels"]["operator.prometheus.io/shard"] = "999";
  EXPECT_EQ(judge(updateRequest(activeShard(1), changed, plainUser())).reason, kAllowShardSetGone);
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
  live_.shard_set = LiveRead::failed("ServerError (500): etcd leader lost at 10.0.0.7");
  const Verdict v = judge(updateRequest(retained_, relabelled(retained_)));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("cannot read ShardSet monitoring/main (ServerError), so the "
                                   "UPDATE of StatefulSet"));
  // The server's own words go to the log, not to whoever sent the review.
  EXPECT_EQ(v.message.find("10.0.0.7"), std::string::npos);
  EXPECT_EQ(v.detail, "ServerError (500): etcd leader lost at 10.0.0.7");
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
