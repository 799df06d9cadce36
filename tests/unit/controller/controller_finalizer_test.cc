// The release finalizer: added on the first reconcile (guarded by a resourceVersion test), and on
// deletion the target is let go of before the finalizer goes, whatever the spec says by then.
#include "controller_fixture.h"

namespace shardscaler::controller::testing {
namespace {

bool hasFinalizer(const Json& object) {
  const Json finalizers = object["metadata"].value("finalizers", Json::array());
  return std::ranges::find(finalizers, Json(kFinalizer)) != finalizers.end();
}

TEST_F(ControllerTest, TheFirstReconcileAddsTheFinalizerGuardedByTheResourceVersion) {
  putTarget(2);
  const Json created = fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  ASSERT_TRUE(shardSet());
  EXPECT_TRUE(hasFinalizer(*shardSet()));

  const auto patches =
      fake_.calls({.verb = Verb::Patch, .resource = "shardsets", .subresource = ""});
  ASSERT_FALSE(patches.empty()) << describe(fake_.calls());
  const k8s::testing::Call& first = patches.front();
  EXPECT_EQ(first.patch_type, k8s::PatchType::Json);
  ASSERT_TRUE(first.body.is_array());
  EXPECT_EQ(first.body[0]["op"], "test");
  EXPECT_EQ(first.body[0]["value"], created["metadata"]["resourceVersion"]);
}

// The target the ShardSet binds to goes in the finalizer's write, before the claim: a crash right
// after the claim cannot leave a claim that a later deletion or move would not release, and a
// first claim writes the ShardSet's metadata once.
TEST_F(ControllerTest, TheFinalizerWriteRecordsTheTargetBeforeTheClaim) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  fake_.failNext({.verb = Verb::Patch, .resource = "prometheuses"}, 1,
                 k8s::testing::statusError(500, "etcd is away"));
  EXPECT_EQ(reconcile().result, k8s::ReconcileResult::Error);
  EXPECT_EQ((*shardSet())["metadata"]["annotations"].value("shardscaler.io/target", ""),
            "Prometheus/main");
  EXPECT_TRUE(hasFinalizer(*shardSet()));
  EXPECT_EQ(fake_.calls({.verb = Verb::Patch, .resource = "shardsets", .subresource = ""}).size(),
            1U)
      << describe(fake_.calls());

  // It goes on to claim, and writes no second metadata patch for the binding.
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success) << describe(fake_.calls());
  EXPECT_EQ((*target())["metadata"]["annotations"].value("shardscaler.io/claimed-by", ""), "main");
  EXPECT_TRUE(
      fake_.calls({.verb = Verb::Patch, .resource = "shardsets", .subresource = ""}).empty())
      << describe(fake_.calls());
}

TEST_F(ControllerTest, AFinalizerWriteThatFailsFailsTheReconcileAndWritesNothingElse) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  fake_.failNext({.verb = Verb::Patch, .resource = "shardsets"}, 1,
                 k8s::testing::statusError(500, "etcd is away"));
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Error);
  EXPECT_NE(outcome.error.find("etcd is away"), std::string::npos) << outcome.error;
  EXPECT_TRUE(fake_.calls({.resource = "prometheuses"}).empty()) << describe(fake_.calls());
  EXPECT_TRUE(fake_.calls({.resource = "statefulsets"}).empty());
}

TEST_F(ControllerTest, ADeletedShardSetReleasesItsTargetThenDropsTheFinalizer) {
  putTarget(2);
  fake_.put(api::shardSets(), shardSetJson(2));
  startController();
  ASSERT_EQ(reconcile().result, k8s::ReconcileResult::Success);
  ASSERT_EQ((*target())["metadata"]["annotations"].value("shardscaler.io/claimed-by", ""), "main");

  // The finalizer keeps it: the API server only marks it.
  ASSERT_TRUE(fake_.remove(api::shardSets(), kNs, "main"));
  ASSERT_TRUE(shardSet());
  const ReconcileOutcome outcome = reconcile();
  EXPECT_EQ(outcome.result, k8s::ReconcileResult::Success) << outcome.error;
  EXPECT_FALSE(shardSet()) << "the finalizer is still there: " << describe(fake_.calls());
  const Json annotations = (*target())["metadata"].value("annotations", Json::object());
  EXPECT_FALSE(annotations.contains("shardscaler.io/claimed-by")) << target()->dump();
  for (int i = 0; i < 2; ++i) {
    const auto sts = fake_.find(k8s::resources::statefulSets(), kNs, shardName(i));
    ASSERT_TRUE(sts) << "a shard was deleted";
    EXPECT_FALSE((*sts)["metadata"]["labels"].contains("shardscaler.io/shardset")) << sts->dump();
  }
  EXPECT_TRUE(fake_.calls({.verb = Verb::Remove}).empty()) << describe(fake_.calls());
}

TEST_F(ControllerTest, AShardSetWithAnInvalidSpecBeingDeletedStillResumesTheTargetItPaused) {
  // Mid-transition: the target is paused by `main`, and `main` is deleted with a spec that no
  // longer validates. The bound target is what it must let go of.
  Json paused = prometheusJson(2);
  paused["spec"]["paused"] = true;
  paused["metadata"]["annotations"] = {{"shardscaler.io/claimed-by", "main"},
                                       {"shardscaler.io/paused-by", "main"},
                                       {"shardscaler.io/paused-at", "2019-12-19T23:59:00Z"}};
  paused["status"] = {{"paused", true}};
  const Json t = fake_.put(planner::targetResource(planner::TargetKind::Prometheus), paused);
  for (int i = 0; i < 2; ++i) {
    Json sts = statefulSetJson(i, t["metadata"]["uid"]);
    sts["metadata"]["labels"]["shardscaler.io/shardset"] = "main";
    fake_.put(k8s::resources::statefulSets(), sts);
  }
  Json deleted = shardSetJson(-3);  // shards below zero: InvalidSpec
  deleted["metadata"]["finalizers"] = {kFinalizer};
  deleted["metadata"]["annotations"] = {{kBoundAnnotation, "Prometheus/main"}};
  deleted["metadata"]["deletionTimestamp"] = "2019-12-20T00:00:00Z";
  fake_.put(api::shardSets(), deleted);
  startController({.guard_enforced = [](const std::string&, std::string*) { return true; }});

  // Bounded: a release may wait out a settle time first (then it asks to come back).
  for (int attempt = 0; attempt < 3 && shardSet(); ++attempt) {
    const ReconcileOutcome outcome = reconcile();
    ASSERT_NE(outcome.result, k8s::ReconcileResult::Error) << outcome.error << "\n"
                                                           << describe(fake_.calls());
    if (outcome.requeue_after) clock_.advance(*outcome.requeue_after);
  }
  EXPECT_FALSE(shardSet()) << "not released: " << describe(fake_.calls());
  ASSERT_TRUE(target());
  EXPECT_FALSE((*target())["spec"].value("paused", false)) << target()->dump();
  const Json annotations = (*target())["metadata"].value("annotations", Json::object());
  EXPECT_FALSE(annotations.contains("shardscaler.io/paused-by")) << target()->dump();
  EXPECT_TRUE(fake_.calls({.verb = Verb::Remove}).empty());
}

}  // namespace
}  // namespace shardscaler::controller::testing
