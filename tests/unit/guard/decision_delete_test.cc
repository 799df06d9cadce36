// The DELETE rules of the shard guard, rule by rule with their edges.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guard_fixtures.h"
#include "shardscaler/guard/decision.h"

namespace shardscaler::guard {
namespace {

using namespace std::chrono_literals;
using namespace testing;
using ::testing::HasSubstr;

class GuardDelete : public ::testing::Test {
 protected:
  void SetUp() override {
    live_.shard_set = LiveRead::found(shardSetJson(3));
    live_.target_object = LiveRead::found(targetJson(3));
    config_.self_user = "system:serviceaccount:monitoring:shardscaler";
  }
  Verdict judge(const AdmissionRequest& request, system_clock::time_point now = fixedNow()) {
    return decide(request, live_, now, config_);
  }

  FakeLiveObjects live_;
  GuardConfig config_;
};

TEST_F(GuardDelete, UnmanagedStatefulSetIsAllowedWithoutAnyRead) {
  const Verdict v = judge(deleteRequest(unmanagedStatefulSet()));
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.reason, kAllowUnmanaged);
  EXPECT_TRUE(live_.reads.empty());
}

TEST_F(GuardDelete, OtherResourcesAndOperationsAreNotJudged) {
  AdmissionRequest pods = deleteRequest(activeShard(0));
  pods.group = "";
  pods.resource = "pods";
  EXPECT_EQ(judge(pods).reason, kAllowNotGuarded);
  AdmissionRequest scale = deleteRequest(activeShard(0));
  scale.sub_resource = "scale";
  EXPECT_EQ(judge(scale).reason, kAllowNotGuarded);
  AdmissionRequest create = deleteRequest(activeShard(0));
  create.operation = Operation::Create;
  create.object = activeShard(0);
  EXPECT_TRUE(judge(create).allowed);
  EXPECT_TRUE(live_.reads.empty());
}

TEST_F(GuardDelete, ActiveShardIsDeniedWithWhyAndHow) {
  const Verdict v = judge(deleteRequest(activeShard(1)));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_EQ(v.message,
            "shardscaler guard: rule ActiveShard: StatefulSet monitoring/prometheus-main-shard-1 "
            "(shard 1 of Prometheus main) is an active shard of ShardSet main (Prometheus main "
            "runs 3 shards, the ShardSet wants 3); deleting it would lose the data it holds. "
            "Change the shard count with `kubectl scale shardset/main -n monitoring --replicas=N`. "
            "To override, act as a member of group system:masters (--guard-exempt-groups).");
  EXPECT_EQ(v.shard_index, 1);
  EXPECT_EQ(v.shard_set, "main");
  EXPECT_EQ(live_.reads, (std::vector<std::string>{"shardset monitoring/main",
                                                   "target monitoring/Prometheus/main"}));
}

TEST_F(GuardDelete, ShardZeroIsActiveEvenWhenTheTargetOmitsShards) {
  live_.target_object = LiveRead::found(targetJson(std::nullopt));  // the operator runs 1 shard
  live_.shard_set = LiveRead::found(shardSetJson(1));
  EXPECT_EQ(judge(deleteRequest(activeShard(0))).reason, kRuleActiveShard);
  EXPECT_EQ(judge(deleteRequest(activeShard(1))).reason, kAllowBeyondShardCount);
  live_.target_object = LiveRead::found(targetJson(0));  // 0 also runs one shard
  live_.shard_set = LiveRead::found(shardSetJson(0, {{"minShards", 1}}));
  EXPECT_EQ(judge(deleteRequest(activeShard(0))).reason, kRuleActiveShard);
}

TEST_F(GuardDelete, ExcessShardAfterAScaleDownIsTheOperatorsToDelete) {
  // Policy Delete: shardscaler lowered spec.shards to 2; the operator removes shard 2.
  live_.shard_set = LiveRead::found(shardSetJson(2));
  live_.target_object = LiveRead::found(targetJson(2));
  const Verdict v = judge(deleteRequest(activeShard(2), operatorUser()));
  EXPECT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.reason, kAllowBeyondShardCount);
  EXPECT_FALSE(judge(deleteRequest(activeShard(1), operatorUser())).allowed);
}

// Found by the soak (guarded, Retain): shards 1-3 were re-attached for 1 -> 4, the ShardSet went
// back to 1 before spec.shards rose, and a lagging operator's DELETE of shard 1 was admitted.
TEST_F(GuardDelete, UnderRetainNoAttachedShardIsTheOperatorsToDelete) {
  live_.shard_set =
      LiveRead::found(shardSetJson(1, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}));
  live_.target_object = LiveRead::found(targetJson(1));
  const Verdict v = judge(deleteRequest(activeShard(1), operatorUser()));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleRetainOnScaleDown);
  EXPECT_THAT(v.message,
              HasSubstr("rule RetainOnScaleDown: StatefulSet monitoring/prometheus-main-shard-1 "
                        "(shard 1 of Prometheus main) is beyond the shard count, but ShardSet main "
                        "retains scaled-away shards (whenScaled=Retain, from ShardSet)"));

  // The policy may come from the target.
  live_.shard_set = LiveRead::found(shardSetJson(1));
  live_.target_object =
      LiveRead::found(targetJson(1, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}));
  EXPECT_EQ(judge(deleteRequest(activeShard(2), operatorUser())).reason, kRuleRetainOnScaleDown);

  // An invalid policy: never delete on doubt.
  live_.shard_set =
      LiveRead::found(shardSetJson(1, {{"shardRetentionPolicy", {{"whenScaled", "Sometimes"}}}}));
  EXPECT_FALSE(judge(deleteRequest(activeShard(1), operatorUser())).allowed);

  // A ShardSet's Delete does not overrule the target's own Retain: the safer policy wins.
  live_.shard_set =
      LiveRead::found(shardSetJson(1, {{"shardRetentionPolicy", {{"whenScaled", "Delete"}}}}));
  EXPECT_EQ(judge(deleteRequest(activeShard(1), operatorUser())).reason, kRuleRetainOnScaleDown);

  // Under Delete on both sides it is the operator's
  // (ExcessShardAfterAScaleDownIsTheOperatorsToDelete), and a detached shard past its deadline is
  // shardscaler's to delete either way.
  live_.target_object = LiveRead::found(targetJson(1));
  EXPECT_TRUE(judge(deleteRequest(activeShard(1), operatorUser())).allowed);
}

TEST_F(GuardDelete, ShardAboutToBeReattachedCountsAsActive) {
  // Scale-up 2 -> 4 in flight: shard 3 is re-attached but spec.shards still says 2.
  live_.shard_set = LiveRead::found(shardSetJson(4));
  live_.target_object = LiveRead::found(targetJson(2));
  const Verdict v = judge(deleteRequest(activeShard(3), operatorUser()));
  EXPECT_FALSE(v.allowed);
  EXPECT_THAT(v.message, HasSubstr("Prometheus main runs 2 shards, the ShardSet wants 4"));
  EXPECT_TRUE(judge(deleteRequest(activeShard(4), operatorUser())).allowed);
}

TEST_F(GuardDelete, DesiredCountIsClampedAndRoundedAsThePlannerDoes) {
  live_.target_object = LiveRead::found(targetJson(1));
  live_.shard_set = LiveRead::found(shardSetJson(10, {{"maxShards", 3}}));
  EXPECT_FALSE(judge(deleteRequest(activeShard(2))).allowed);
  EXPECT_TRUE(judge(deleteRequest(activeShard(3))).allowed);

  // Topology with 3 zones: 4 rounds up to 6.
  live_.target_object = LiveRead::found(targetJson(
      3,
      {{"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b", "c"}}}}}}}));
  live_.shard_set = LiveRead::found(shardSetJson(4));
  EXPECT_FALSE(judge(deleteRequest(activeShard(5))).allowed);
  EXPECT_TRUE(judge(deleteRequest(activeShard(6))).allowed);
}

TEST_F(GuardDelete, InvalidShardSetSpecMakesEveryLabelledShardActive) {
  live_.shard_set = LiveRead::found(shardSetJson(2, {{"minShards", 5}, {"maxShards", 3}}));
  live_.target_object = LiveRead::found(targetJson(2));
  const Verdict v = judge(deleteRequest(activeShard(7)));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_THAT(v.message, HasSubstr("whose spec is invalid (spec.maxShards), so every shard"));
  EXPECT_THAT(v.detail, HasSubstr("spec.maxShards: must not be below"));

  Json no_shards = shardSetJson(2);
  no_shards["spec"].erase("shards");
  live_.shard_set = LiveRead::found(no_shards);
  EXPECT_THAT(judge(deleteRequest(activeShard(7))).message,
              HasSubstr("spec is invalid (spec.shards)"));

  live_.shard_set = LiveRead::found(shardSetJson(2, {{"minShards", "two"}}));
  EXPECT_FALSE(judge(deleteRequest(activeShard(7))).allowed);
}

TEST_F(GuardDelete, UnknownTargetKindMakesTheShardActive) {
  live_.shard_set = LiveRead::found(shardSetJson(2, {{"targetRef", {{"kind", "Alertmanager"}}}}));
  const Verdict v = judge(deleteRequest(activeShard(5)));
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_THAT(v.message, HasSubstr("targetRef.kind \"Alertmanager\" is not Prometheus"));
}

TEST_F(GuardDelete, MissingOrGarbageShardIndexIsKept) {
  Json no_index = activeShard(4);
  no_index["metadata"]["labels"].erase("operator.prometheus.io/shard");
  Verdict v = judge(deleteRequest(no_index));
  EXPECT_EQ(v.reason, kRuleUnknownShardIndex);
  EXPECT_THAT(v.message, HasSubstr("operator.prometheus.io/shard label is missing"));
  EXPECT_EQ(v.message.find("(shard "), std::string::npos) << v.message;

  for (const char* garbage : {"", "-1", "04", "x", "99999999999"}) {
    Json bad = activeShard(4);
    bad["metadata"]["labels"]["operator.prometheus.io/shard"] = garbage;
    v = judge(deleteRequest(bad));
    EXPECT_EQ(v.reason, kRuleUnknownShardIndex) << garbage;
    EXPECT_THAT(v.message, HasSubstr("\"" + std::string(garbage) + "\", not a shard index"));
  }
}

TEST_F(GuardDelete, TargetGoneLeavesTheDesiredCount) {
  live_.target_object = LiveRead::absent();
  live_.shard_set = LiveRead::found(shardSetJson(2));
  const Verdict v = judge(deleteRequest(activeShard(1)));
  EXPECT_FALSE(v.allowed);
  EXPECT_THAT(v.message, HasSubstr("Prometheus main was not found, the ShardSet wants 2"));
  EXPECT_TRUE(judge(deleteRequest(activeShard(2))).allowed);
}

// A denial names the kind of failure only; the server's words (which may name users, addresses or
// the objects' contents) stay in the log, not in the answer to whoever sent the review.
TEST_F(GuardDelete, FailedReadsDenyWithTheKindOfFailure) {
  live_.shard_set = LiveRead::failed("Transport: connection refused by 10.96.0.1:443");
  Verdict v = judge(deleteRequest(activeShard(9)));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("cannot read ShardSet monitoring/main (Transport), so the "
                                   "DELETE of StatefulSet monitoring/prometheus-main-shard-9 "
                                   "(shard 9)"));
  EXPECT_EQ(v.message.find("10.96.0.1"), std::string::npos);
  EXPECT_EQ(v.detail, "Transport: connection refused by 10.96.0.1:443");

  live_.shard_set = LiveRead::found(shardSetJson(2));
  live_.target_object = LiveRead::failed(
      "Forbidden (403): user system:serviceaccount:x:shardscaler cannot get prometheuses");
  v = judge(deleteRequest(activeShard(9)));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("cannot read Prometheus main (Forbidden)"));
  EXPECT_EQ(v.message.find("serviceaccount"), std::string::npos);

  live_.target_object = LiveRead::found(Json::array());
  v = judge(deleteRequest(activeShard(9)));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("cannot read Prometheus main (its spec does not decode)"));

  live_.shard_set = LiveRead::found(Json{{"metadata", {{"namespace", "monitoring"}}}});
  v = judge(deleteRequest(activeShard(9)));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("ShardSet monitoring/main cannot be read (it does not decode)"));
  EXPECT_THAT(v.detail, HasSubstr("metadata.name: required"));
}

// The decision never throws, whatever the request holds (the decoder refuses such reviews from
// the wire; a caller handing one in directly gets a verdict, not an exception).
TEST_F(GuardDelete, ANameThatIsNotAStringIsNotAnException) {
  Json odd = activeShard(1);
  odd["metadata"]["name"] = 42;
  AdmissionRequest r = deleteRequest(odd);
  r.name.clear();
  const Verdict v = judge(r);
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_THAT(v.message, HasSubstr("StatefulSet monitoring/ (shard 1 of Prometheus main)"));
}

TEST_F(GuardDelete, ShardSetGoneReleasesTheShard) {
  live_.shard_set = LiveRead::absent();
  const Verdict v = judge(deleteRequest(retainedShard(3, "9999-01-01T00:00:00Z")));
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.reason, kAllowShardSetGone);
  EXPECT_EQ(live_.reads, std::vector<std::string>{"shardset monitoring/main"});
}

TEST_F(GuardDelete, RetainedShardBeforeItsDeadlineIsDenied) {
  const Verdict v = judge(deleteRequest(retainedShard(3, "2026-11-25T10:00:00Z"), operatorUser()));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleRetainedBeforeDeadline);
  EXPECT_EQ(v.message,
            "shardscaler guard: rule RetainedBeforeDeadline: StatefulSet "
            "monitoring/prometheus-main-shard-3 (shard 3 of Prometheus main) is retained by "
            "ShardSet main until 2026-11-25T10:00:00Z; shardscaler deletes it once that passes. "
            "To override, act as a member of group system:masters (--guard-exempt-groups).");
  EXPECT_EQ(v.deadline, "2026-11-25T10:00:00Z");
  // The deadline rule needs no target.
  EXPECT_EQ(live_.reads, std::vector<std::string>{"shardset monitoring/main"});
}

TEST_F(GuardDelete, DeadlineIsStrictlyAfter) {
  const Json shard = retainedShard(3, "2026-11-22T10:00:00Z");
  EXPECT_FALSE(judge(deleteRequest(shard), fixedNow() - 1s).allowed);
  EXPECT_FALSE(judge(deleteRequest(shard), fixedNow()).allowed);
  const Verdict after = judge(deleteRequest(shard), fixedNow() + 1ms);
  EXPECT_TRUE(after.allowed);
  EXPECT_EQ(after.reason, kAllowDeadlinePassed);
}

TEST_F(GuardDelete, DeadlineInAnotherZoneIsShownInUtc) {
  const Verdict v = judge(deleteRequest(retainedShard(3, "2026-11-25T12:30:00+02:30")));
  EXPECT_THAT(v.message, HasSubstr("until 2026-11-25T10:00:00Z;"));
}

TEST_F(GuardDelete, NeverMissingAndGarbageDeadlinesKeepTheShard) {
  Verdict v =
      judge(deleteRequest(retainedShard(3, "0001-01-01T00:00:00Z")), fixedNow() + 24h * 365 * 100);
  EXPECT_EQ(v.reason, kRuleRetainedBeforeDeadline);
  EXPECT_THAT(v.message, HasSubstr("with no deadline (0001-01-01T00:00:00Z means never)"));

  v = judge(deleteRequest(retainedShard(3, std::nullopt)));
  EXPECT_EQ(v.reason, kRuleRetainedBeforeDeadline);
  EXPECT_THAT(v.message, HasSubstr("but has no operator.prometheus.io/deletion-timestamp "
                                   "annotation, so it is kept (never delete on doubt)"));

  v = judge(deleteRequest(retainedShard(3, "tomorrow")));
  EXPECT_EQ(v.reason, kRuleRetainedBeforeDeadline);
  EXPECT_THAT(v.message, HasSubstr("is unreadable (\"tomorrow\" is not an RFC3339 time"));
  EXPECT_EQ(v.deadline, "tomorrow");
}

TEST_F(GuardDelete, RetainedShardThatIsAlsoAttachedMustPassBothRules) {
  Json odd = relabelled(retainedShard(1, "2026-11-01T00:00:00Z"));  // expired, but attached
  Verdict v = judge(deleteRequest(odd));
  EXPECT_EQ(v.reason, kRuleActiveShard);
  odd = relabelled(retainedShard(5, "2026-11-01T00:00:00Z"));
  v = judge(deleteRequest(odd));
  EXPECT_TRUE(v.allowed) << v.message;
}

TEST_F(GuardDelete, ExemptIdentitiesPassWithoutReads) {
  EXPECT_EQ(judge(deleteRequest(activeShard(0), admin())).reason, kAllowExempt);
  EXPECT_TRUE(live_.reads.empty());

  config_.exempt_groups = {};
  config_.exempt_users = {"alice"};
  EXPECT_FALSE(judge(deleteRequest(activeShard(0), admin())).allowed);
  EXPECT_TRUE(judge(deleteRequest(activeShard(0), {"alice", {}})).allowed);
  EXPECT_THAT(judge(deleteRequest(activeShard(0))).message,
              HasSubstr("To override, act as user alice (--guard-exempt-users)."));
  config_.exempt_users = {};
  EXPECT_THAT(judge(deleteRequest(activeShard(0))).message, HasSubstr("No identity is exempt"));
  config_.exempt_groups = {"platform-admins", "sre"};
  EXPECT_TRUE(judge(deleteRequest(activeShard(0), {"bob", {"sre"}})).allowed);
  EXPECT_THAT(judge(deleteRequest(activeShard(0))).message,
              HasSubstr("act as a member of group platform-admins or sre"));
}

// The operator may run as shardscaler's user (a sidecar sharing its pod's ServiceAccount), and a
// DELETE carries no field manager to tell them apart: every DELETE is judged by the rules, so
// shardscaler's own user gets no more than the rules give anyone.
TEST_F(GuardDelete, ShardscalersOwnUserIsJudgedByTheRulesLikeAnyone) {
  const UserInfo self{config_.self_user, {"system:serviceaccounts"}};
  AdmissionRequest active = deleteRequest(activeShard(0), self);
  active.field_manager = "shardscaler";  // a forged one changes nothing for a DELETE
  Verdict v = judge(active);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_EQ(judge(deleteRequest(retainedShard(3, "2099-01-01T00:00:00Z"), self)).reason,
            kRuleRetainedBeforeDeadline);
  // What shardscaler itself deletes, the rules admit: a retained shard past its deadline.
  v = judge(deleteRequest(retainedShard(3, "2026-11-01T00:00:00Z"), self));
  EXPECT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.reason, kAllowDeadlinePassed);
}

TEST_F(GuardDelete, AnEmptySelfUserExemptsNobody) {
  config_.self_user = "";
  EXPECT_FALSE(judge(deleteRequest(activeShard(0), {"", {}})).allowed);
}

TEST_F(GuardDelete, GarbageCollectorMayCleanUpAfterTheTarget) {
  // Attached shards, and retained ones a detach left owned by the target, go with it.
  const Json retained = ownedByTarget(retainedShard(3, "2026-11-25T10:00:00Z"));
  live_.target_object = LiveRead::absent();
  Verdict v = judge(deleteRequest(retained, garbageCollector()));
  EXPECT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.reason, kAllowCleanup);
  EXPECT_EQ(judge(deleteRequest(ownedByTarget(activeShard(0)), garbageCollector())).reason,
            kAllowCleanup);

  Json deleting = targetJson(3);
  deleting["metadata"]["deletionTimestamp"] = "2026-11-22T09:59:00Z";
  live_.target_object = LiveRead::found(deleting);
  EXPECT_EQ(judge(deleteRequest(ownedByTarget(activeShard(0)), garbageCollector())).reason,
            kAllowCleanup);

  // The same identity gets no pass while the target lives.
  live_.target_object = LiveRead::found(targetJson(3));
  v = judge(deleteRequest(ownedByTarget(activeShard(0)), garbageCollector()));
  EXPECT_EQ(v.reason, kRuleActiveShard);
  EXPECT_EQ(judge(deleteRequest(retained, garbageCollector())).reason, kRuleRetainedBeforeDeadline);
  // Nor does anyone else when the target is gone.
  live_.target_object = LiveRead::absent();
  EXPECT_EQ(judge(deleteRequest(retained, operatorUser())).reason, kRuleRetainedBeforeDeadline);
}

// A detach moves a retained shard's owner reference to the ShardSet. A foreground deletion of the
// ShardSet (kubectl delete --cascade=foreground, a GitOps prune) makes the garbage collector
// delete the ShardSet's dependents while its finalizer has not run yet, as it does whenever no
// replica leads: it must not take them, whether the target exists or not, whatever the deadline.
TEST_F(GuardDelete, GarbageCollectorNeverDeletesAShardItsShardSetRetains) {
  Json foreground = shardSetJson(3);
  foreground["metadata"]["deletionTimestamp"] = "2026-11-22T09:59:00Z";
  foreground["metadata"]["finalizers"] = {"foregroundDeletion", "shardscaler.io/release-target"};
  live_.shard_set = LiveRead::found(foreground);
  const Json retained = ownedByShardSet(retainedShard(3, "2026-11-25T10:00:00Z"));
  const Json due = ownedByShardSet(retainedShard(4, "2026-11-01T00:00:00Z"));
  for (const LiveRead& target : {LiveRead::absent(), LiveRead::found(targetJson(3))}) {
    live_.target_object = target;
    for (const Json& shard : {retained, due}) {
      const Verdict v = judge(deleteRequest(shard, garbageCollector()));
      EXPECT_FALSE(v.allowed) << v.message;
      EXPECT_EQ(v.reason, kRuleRetainedByShardSet) << v.message;
    }
  }
  live_.target_object = LiveRead::absent();
  live_.reads.clear();
  const Verdict v = judge(deleteRequest(retained, garbageCollector()));
  EXPECT_THAT(v.message,
              HasSubstr("rule RetainedByShardSet: StatefulSet monitoring/prometheus-main-shard-3 "
                        "(shard 3) is retained by ShardSet main, which owns it: the garbage "
                        "collector may delete a retained shard only with its target or its "
                        "namespace."));
  EXPECT_THAT(v.message, HasSubstr("RetainedShardsOrphaned"));
  // Judged before anything else is read: the namespace only.
  EXPECT_EQ(live_.reads, (std::vector<std::string>{"namespace monitoring"}));
}

// The finalizer drops the ShardSet's owner reference and then the ShardSet goes: a DELETE the
// garbage collector decided on from a read before that finds the shard owned by nothing and its
// ShardSet gone. It is refused all the same: the collector deletes only what an owner holds.
TEST_F(GuardDelete, GarbageCollectorsDeleteOfAnOrphanedRetainedShardIsRefused) {
  live_.shard_set = LiveRead::absent();
  live_.target_object = LiveRead::absent();
  const Verdict v =
      judge(deleteRequest(retainedShard(3, "2026-11-25T10:00:00Z"), garbageCollector()));
  EXPECT_FALSE(v.allowed) << v.message;
  EXPECT_EQ(v.reason, kRuleRetainedByShardSet);
  EXPECT_THAT(v.message, HasSubstr("nothing owns it"));
  // Anyone else may delete a released shard.
  EXPECT_EQ(judge(deleteRequest(retainedShard(3, "2026-11-25T10:00:00Z"))).reason,
            kAllowShardSetGone);
}

// Namespace deletion takes everything, retained shards included, and must not hang.
TEST_F(GuardDelete, CleanupOfATerminatingNamespaceTakesRetainedShardsToo) {
  live_.namespace_object = LiveRead::found(namespaceJson(true));
  const UserInfo ns_controller{"system:serviceaccount:kube-system:namespace-controller", {}};
  for (const UserInfo& user : {ns_controller, garbageCollector()}) {
    for (const Json& shard : {ownedByShardSet(retainedShard(3, "2026-11-25T10:00:00Z")),
                              retainedShard(4, "0001-01-01T00:00:00Z")}) {
      const Verdict v = judge(deleteRequest(shard, user));
      EXPECT_TRUE(v.allowed) << v.message;
      EXPECT_EQ(v.reason, kAllowCleanup);
    }
  }
  live_.namespace_object = LiveRead::failed("Timeout: no answer");
  EXPECT_EQ(judge(deleteRequest(ownedByShardSet(retainedShard(3, "2026-11-25T10:00:00Z")),
                                garbageCollector()))
                .reason,
            kRuleReadFailed);
}

TEST_F(GuardDelete, NamespaceControllerMayCleanUpATerminatingNamespace) {
  const UserInfo ns_controller{"system:serviceaccount:kube-system:namespace-controller", {}};
  live_.namespace_object = LiveRead::found(namespaceJson(true));
  EXPECT_EQ(judge(deleteRequest(activeShard(0), ns_controller)).reason, kAllowCleanup);
  Json phase_only = namespaceJson(false);
  phase_only["status"]["phase"] = "Terminating";
  live_.namespace_object = LiveRead::found(phase_only);
  EXPECT_EQ(judge(deleteRequest(activeShard(0), ns_controller)).reason, kAllowCleanup);
  EXPECT_EQ(judge(deleteRequest(activeShard(0), {"system:kube-controller-manager", {}})).reason,
            kAllowCleanup);
  // Someone else in a terminating namespace is judged by the rules.
  EXPECT_EQ(judge(deleteRequest(activeShard(0), operatorUser())).reason, kRuleActiveShard);

  live_.namespace_object = LiveRead::failed("Timeout: no answer");
  const Verdict v = judge(deleteRequest(activeShard(0), ns_controller));
  EXPECT_EQ(v.reason, kRuleReadFailed);
  EXPECT_THAT(v.message, HasSubstr("cannot read namespace monitoring to tell whether it is being "
                                   "deleted (Timeout)"));
}

TEST_F(GuardDelete, CleanupIdentitiesAreConfigurable) {
  config_.cleanup_users = {"admin"};
  config_.exempt_groups = {};
  live_.target_object = LiveRead::absent();
  const Json shard = ownedByTarget(activeShard(0));
  EXPECT_EQ(judge(deleteRequest(shard, {"admin", {"system:masters"}})).reason, kAllowCleanup);
  EXPECT_EQ(judge(deleteRequest(shard, garbageCollector())).reason, kRuleActiveShard);
}

TEST_F(GuardDelete, DryRunIsJudgedTheSame) {
  AdmissionRequest dry = deleteRequest(activeShard(1));
  dry.dry_run = true;
  EXPECT_EQ(judge(dry).message, judge(deleteRequest(activeShard(1))).message);
}

TEST_F(GuardDelete, ReviewWithoutTheOldObjectIsDenied) {
  AdmissionRequest r = deleteRequest(activeShard(1));
  r.old_object = nullptr;
  const Verdict v = judge(r);
  EXPECT_EQ(v.reason, kRuleIncompleteReview);
  EXPECT_THAT(v.message, HasSubstr("the DELETE review of StatefulSet "
                                   "monitoring/prometheus-main-shard-1 carries no oldObject"));
}

}  // namespace
}  // namespace shardscaler::guard

namespace shardscaler::guard {
namespace {

using namespace testing;
using ::testing::HasSubstr;

// The drain (docs/design/drain.md), on unless the ShardSet opts out, whether it reads a Prometheus
// or the shards' own pods: a due shard goes only once shardscaler found it drained (drained-at),
// or its drain timed out under onTimeout: Delete.
class GuardDrain : public ::testing::Test {
 protected:
  void SetUp() override { live_.target_object = LiveRead::found(targetJson(3)); }
  void drainPolicy(const std::string& when, const Json& drain = Json::object()) {
    Json patch{{"shardRetentionPolicy", {{"whenScaled", when}}}};
    patch["shardRetentionPolicy"]["drain"] = drain.empty() ? Json{{"enabled", true}} : drain;
    live_.shard_set = LiveRead::found(shardSetJson(3, patch));
  }
  Verdict judge(const AdmissionRequest& request) {
    return decide(request, live_, fixedNow(), config_);
  }
  // Due an hour ago (the fixture's now is 2026-11-22T10:00:00Z); found undrained since
  // `draining_since` when set.
  static Json dueShard(bool drained, const std::string& draining_since = "") {
    Json shard = retainedShard(3, "2026-11-22T09:00:00Z");
    if (drained) {
      shard["metadata"]["annotations"]["shardscaler.io/drained-at"] = "2026-11-22T09:59:00Z";
    }
    if (!draining_since.empty()) {
      shard["metadata"]["annotations"]["shardscaler.io/draining-since"] = draining_since;
    }
    return shard;
  }

  FakeLiveObjects live_;
  GuardConfig config_;
};

TEST_F(GuardDrain, ADueShardNotDrainedIsRefusedUntilItIs) {
  drainPolicy("Retain");
  const Verdict v = judge(deleteRequest(dueShard(false), operatorUser()));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleNotDrained);
  EXPECT_THAT(v.message, HasSubstr("has not found its data shipped yet"));
  EXPECT_TRUE(judge(deleteRequest(dueShard(true), operatorUser())).allowed);
}

TEST_F(GuardDrain, PastTheTimeoutOnlyOnTimeoutDeleteLetsItGo) {
  const Json draining = dueShard(false, "2026-11-22T09:00:00Z");
  drainPolicy("Retain", {{"timeoutSeconds", 600}});
  EXPECT_EQ(judge(deleteRequest(draining)).reason, kRuleNotDrained);
  drainPolicy("Retain", {{"timeoutSeconds", 600}, {"onTimeout", "Delete"}});
  EXPECT_TRUE(judge(deleteRequest(draining)).allowed);
  drainPolicy("Retain", {{"timeoutSeconds", 7200}, {"onTimeout", "Delete"}});
  EXPECT_EQ(judge(deleteRequest(draining)).reason, kRuleNotDrained);
}

// The timeout counts from shardscaler's first check (draining-since), as the planner's does: a
// shard due long before it was first checked, or never found undrained, is not timed out.
TEST_F(GuardDrain, TheTimeoutCountsFromTheFirstCheckNotFromTheDeadline) {
  drainPolicy("Retain", {{"timeoutSeconds", 600}, {"onTimeout", "Delete"}});
  const Verdict unchecked = judge(deleteRequest(dueShard(false)));
  EXPECT_EQ(unchecked.reason, kRuleNotDrained) << "due an hour ago, never found undrained";
  EXPECT_THAT(unchecked.message, Not(HasSubstr("times out")));

  Json shard = dueShard(false);
  shard["metadata"]["annotations"]["shardscaler.io/draining-since"] = "2026-11-22T09:55:00Z";
  const Verdict draining = judge(deleteRequest(shard));
  EXPECT_EQ(draining.reason, kRuleNotDrained);
  EXPECT_THAT(draining.message, HasSubstr("times out at 2026-11-22T10:05:00Z"));

  shard["metadata"]["annotations"]["shardscaler.io/draining-since"] = "2026-11-22T09:50:00Z";
  EXPECT_TRUE(judge(deleteRequest(shard)).allowed);

  for (const char* unreadable : {"garbage", "2262-04-11T23:50:00Z", "9999-01-01T00:00:00Z"}) {
    shard["metadata"]["annotations"]["shardscaler.io/draining-since"] = unreadable;
    EXPECT_EQ(judge(deleteRequest(shard)).reason, kRuleNotDrained) << unreadable;
  }
  // Near the end of a time_point's range, adding the timeout must not wrap into the past.
  shard["metadata"]["annotations"]["shardscaler.io/draining-since"] = "2262-04-11T23:40:00Z";
  EXPECT_EQ(judge(deleteRequest(shard)).reason, kRuleNotDrained);
}

// No drain fields and no URL: the drain is on, read from the shards' own pods. Only an opt-out
// makes the deadline enough.
TEST_F(GuardDrain, WithoutAnEndpointTheDrainHoldsAndOnlyAnOptOutMakesTheDeadlineEnough) {
  live_.shard_set = LiveRead::found(
      test_objects::shardSetJson(3, {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}));
  EXPECT_EQ(judge(deleteRequest(dueShard(false))).reason, kRuleNotDrained);
  drainPolicy("Retain", {{"enabled", false}});
  EXPECT_TRUE(judge(deleteRequest(dueShard(false))).allowed);
}

TEST_F(GuardDrain, UnderDeleteWithADrainTheOperatorMayNotDeleteAShardAboveTheCount) {
  drainPolicy("Delete");
  const Verdict v = judge(deleteRequest(activeShard(4), operatorUser()));
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.reason, kRuleRetainOnScaleDown);
  EXPECT_THAT(v.message, HasSubstr("drains removed shards"));
  live_.shard_set = LiveRead::found(
      test_objects::shardSetJson(3, {{"shardRetentionPolicy", {{"whenScaled", "Delete"}}}}));
  EXPECT_EQ(judge(deleteRequest(activeShard(4), operatorUser())).reason, kRuleRetainOnScaleDown)
      << "the drain is on by default";
  drainPolicy("Delete", {{"enabled", false}});
  EXPECT_TRUE(judge(deleteRequest(activeShard(4), operatorUser())).allowed);
}

}  // namespace
}  // namespace shardscaler::guard
