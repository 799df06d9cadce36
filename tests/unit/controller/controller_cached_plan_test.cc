// A ShardSet at rest is planned from the informer caches: its reconcile reads nothing and writes
// at most its status. Anything else (caches older than the last live read, a reconcile after one
// that stopped early, a shard without our guard label) reads live, as every transition does.
#include <atomic>
#include <string>
#include <vector>

#include "controller_fixture.h"

namespace shardscaler::controller::testing {
namespace {

// The reads a reconcile sent to the API server (gets and lists; watches are the informers').
std::vector<k8s::testing::Call> reads(const FakeKubeClient& fake) {
  auto calls = fake.calls();
  std::erase_if(calls, [](const auto& c) { return c.verb != Verb::Get && c.verb != Verb::List; });
  return calls;
}

// The status as a restart finds it after someone cleared it (the scale bench does, so that
// convergence can be seen): the next reconcile has a status to write.
void clearStatus(FakeKubeClient& fake) {
  ASSERT_TRUE(fake.patch(api::shardSets(), kNs, "main", k8s::PatchType::Json,
                         Json::array({{{"op", "remove"}, {"path", "/status"}}}), "status"));
}

bool guardEnforced(const std::string&, std::string*) { return true; }

TEST_F(ControllerTest, AShardSetAtRestIsPlannedFromTheCachesAndWritesOnlyItsStatus) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);  // claims and labels
  // Its last round read live after those writes and found nothing to do; the caches hold what
  // it saw, so the next reconcile plans from them.
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  EXPECT_TRUE(reads(fake_).empty()) << describe(fake_.calls());

  clearStatus(fake_);
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  EXPECT_TRUE(reads(fake_).empty()) << describe(fake_.calls());
  ASSERT_EQ(statusWrites().size(), 1U) << describe(fake_.calls());
  EXPECT_EQ(fake_.writes().size(), 1U) << describe(fake_.calls());
  const Json status = (*shardSet())["status"];
  EXPECT_EQ(status.value("shards", 0), 2) << status.dump();
  EXPECT_EQ(status.value("targetShards", 0), 2) << status.dump();
}

// A first claim reads once: the claim and the guard labels follow that read, and nothing reads
// after them. The reconcile ends there and asks to be run again; the next one plans from the
// caches, which now hold those writes, and writes the status without a read.
TEST_F(ControllerTest, AClaimIsConfirmedFromTheCachesNotByAReadAfterIt) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  const ReconcileOutcome claimed = reconcile();
  ASSERT_EQ(claimed.result, k8s::ReconcileResult::Success) << claimed.error;
  EXPECT_TRUE(claimed.requeue_after.has_value());
  EXPECT_EQ(fake_.calls({.verb = Verb::Get, .resource = "prometheuses"}).size(), 1U)
      << describe(fake_.calls());
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .resource = "statefulsets"}).size(), 2U);
  const auto calls = fake_.calls();
  std::size_t last_read = 0;
  std::size_t last_write = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].verb == Verb::Watch) continue;
    (calls[i].verb == Verb::Get || calls[i].verb == Verb::List ? last_read : last_write) = i;
  }
  EXPECT_LT(last_read, last_write) << "a read after the writes: " << describe(calls);
  EXPECT_TRUE(statusWrites().empty());

  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  EXPECT_TRUE(reads(fake_).empty()) << describe(fake_.calls());
  ASSERT_EQ(statusWrites().size(), 1U) << describe(fake_.calls());
  EXPECT_EQ((*shardSet())["status"].value("shards", 0), 2);
}

// The caches keep no owner references: a retained shard is found by our guard label, and the
// status a plan from the caches writes names it with its deadline, as a live plan does.
TEST_F(ControllerTest, ARetainedShardIsInThePlanFromTheCaches) {
  Json t = prometheusJson(2);
  t["spec"]["shardRetentionPolicy"] = {{"whenScaled", "Retain"},
                                       {"retain", {{"retentionPeriod", "1h"}}}};
  t = fake_.put(planner::targetResource(planner::TargetKind::Prometheus), t);
  for (int i = 0; i < 2; ++i) {
    fake_.put(k8s::resources::statefulSets(),
              statefulSetJson(i, t["metadata"]["uid"].get<std::string>()));
  }
  fake_.put(api::shardSets(), shardSetJson(2));
  startController({.guard_enforced = guardEnforced});
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_TRUE(fake_.patch(api::shardSets(), kNs, "main", k8s::PatchType::Merge,
                          Json{{"spec", {{"shards", 1}}}}));
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);  // the scale-down
  ASSERT_EQ((*target())["spec"].value("shards", 0), 1) << target()->dump();
  // Ready once the settle time after the detach (10 s) has passed.
  clock_.advance(std::chrono::seconds(11));
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  const Json live_status = (*shardSet())["status"];
  ASSERT_EQ(live_status.value("retainedShards", Json::array()).size(), 1U) << live_status.dump();

  clearStatus(fake_);
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  EXPECT_TRUE(reads(fake_).empty()) << describe(fake_.calls());
  const Json status = (*shardSet())["status"];
  EXPECT_EQ(status["retainedShards"], live_status["retainedShards"]) << status.dump();
  EXPECT_EQ(status.value("shards", 0), 1) << status.dump();
}

// Caches that have not caught up with what the last live read saw are not planned from: the
// status would report an older world than the one already reported.
TEST_F(ControllerTest, CachesOlderThanTheLastLiveReadAreNotPlannedFrom) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  // As the first reconcile claims the target, the caches stop hearing (their watches end and
  // the informers back off on the manual clock): the claim's version never reaches them. (They
  // hold everything before it, the ShardSet's finalizer among it.)
  std::atomic<bool> stopped{false};
  fake_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb != Verb::Patch || call.resource.resource != "prometheuses") return;
    if (stopped.exchange(true)) return;
    EXPECT_TRUE(fake_.awaitWatchesDelivered(kWatches));
    fake_.stopWatches();
  });
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  fake_.setBeforeCall({});
  ASSERT_TRUE(stopped);

  fake_.clearCalls();  // not reconcile(): the watches are over
  const ReconcileOutcome outcome = controller_->reconcile(kKey);
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  EXPECT_FALSE(fake_.calls({.verb = Verb::Get, .resource = "prometheuses"}).empty())
      << describe(fake_.calls());
}

// resourceVersions are opaque to clients; they are ordered only as the numbers kube-apiserver
// writes (docs/design/reads.md). Where they are not numbers, no cache is taken to be as new as a
// live read: every reconcile reads live, and the shard lists after a StatefulSet write are quorum
// reads rather than watch-cache reads from a version that cannot be named.
TEST_F(ControllerTest, OpaqueResourceVersionsAreNeverOrdered) {
  fake_.useOpaqueResourceVersions();
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);  // claims and labels
  ASSERT_FALSE(fake_.writes({.resource = "statefulsets"}).empty()) << describe(fake_.calls());

  for (int i = 0; i < 2; ++i) {
    const ReconcileOutcome outcome = reconcile();
    ASSERT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
    EXPECT_EQ(fake_.calls({.verb = Verb::Get, .resource = "prometheuses"}).size(), 1U)
        << describe(fake_.calls());
    const auto lists = fake_.calls({.verb = Verb::List, .resource = "statefulsets"});
    EXPECT_FALSE(lists.empty()) << describe(fake_.calls());
    for (const auto& list : lists) {
      EXPECT_EQ(list.list_options.resource_version, "") << describe(fake_.calls());
      EXPECT_EQ(list.list_options.resource_version_match, "") << describe(fake_.calls());
    }
  }
  const Json status = (*shardSet())["status"];
  EXPECT_EQ(status.value("shards", 0), 2) << status.dump();
}

// A shard the operator created, which carries no guard label yet, is read live (and labelled).
TEST_F(ControllerTest, AShardWithoutOurLabelInTheCachesSendsTheReconcileLive) {
  // The operator has not created shard 2 of 3 yet.
  const Json t = putTarget(3, 2);
  fake_.put(api::shardSets(), shardSetJson(3));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_TRUE(reads(fake_).empty()) << describe(fake_.calls());

  fake_.put(k8s::resources::statefulSets(), statefulSetJson(2, t["metadata"]["uid"]));
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  EXPECT_FALSE(fake_.calls({.verb = Verb::List, .resource = "statefulsets"}).empty())
      << describe(fake_.calls());
  const auto sts = fake_.find(k8s::resources::statefulSets(), kNs, shardName(2));
  ASSERT_TRUE(sts);
  EXPECT_EQ((*sts)["metadata"]["labels"].value("shardscaler.io/shardset", ""), "main");
}

}  // namespace
}  // namespace shardscaler::controller::testing
