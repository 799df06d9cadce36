// Deleting a ShardSet lets go of its target: a transition cut short is undone (never a target
// left paused by shardscaler), and retained StatefulSets are kept, not deleted.
#include <chrono>

#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

class LifecycleTest : public ShardSetScenario {
 protected:
  ::testing::AssertionResult waitForShardSetGone() {
    return waitFor("the ShardSet to be deleted", [&](std::string* seen) {
      Json ss = shardSet();
      *seen = ss.is_null() ? "gone" : ss["metadata"].dump();
      return ss.is_null();
    });
  }
};

TEST_F(LifecycleTest, DeletingAShardSetMidScaleDownResumesTheTarget) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  const auto uids = statefulSetUids();
  EXPECT_EQ(shardSet()["metadata"]["finalizers"], Json::array({"shardscaler.io/release-target"}));

  // Crash right after the first write of 4 -> 2 (the pause) and after one detach.
  shardscaler_->kill9();
  shardscaler_->start({"SHARDSCALER_FAULT_KILL_AFTER_WRITES=2"});
  ASSERT_TRUE(waitFor("shardscaler ready", [&](std::string*) {
    return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
  }));
  scaleWithKubectl(2);
  ASSERT_TRUE(
      test_kit::eventually(20s, kPoll, [&](std::string*) { return !shardscaler_->running(); }));
  ASSERT_TRUE(prometheus()["spec"].value("paused", false)) << "the crash came too late";

  auto deleted = kubectl("delete shardset main -n " + ns_ + " --wait=false");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  shardscaler_->start();
  ASSERT_TRUE(waitForShardSetGone());

  Json target = prometheus();
  EXPECT_FALSE(target["spec"].value("paused", false));
  EXPECT_FALSE(
      target["metadata"].value("annotations", Json::object()).contains("shardscaler.io/paused-by"));
  EXPECT_EQ(target["spec"]["shards"], 4);
  ASSERT_TRUE(waitFor("every shard attached again", [&](std::string*) {
    auto sets = statefulSets();
    return sets.size() == 4 && std::ranges::all_of(sets, [](const StatefulSetView& s) {
             return s.attached && !s.retained && s.deletion_timestamp.empty();
           });
  }));
  EXPECT_EQ(statefulSetUids(), uids);
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
}

TEST_F(LifecycleTest, DeletingAShardSetKeepsItsRetainedShards) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  scaleWithKubectl(1);
  ASSERT_TRUE(waitForSettled(1, 2));

  auto deleted = kubectl("delete shardset main -n " + ns_);
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  ASSERT_TRUE(waitForShardSetGone());
  auto sets = statefulSets();
  ASSERT_EQ(sets.size(), 3u);
  for (int i : {1, 2}) {
    EXPECT_TRUE(sets[i].retained) << sets[i].name;
    EXPECT_FALSE(sets[i].being_deleted) << sets[i].name;
  }
  EXPECT_EQ(prometheus()["spec"]["shards"], 1);
  bool warned = false;
  for (const auto& e : shardSetEvents()) warned |= e.starts_with("RetainedShardsOrphaned: ");
  EXPECT_TRUE(warned) << ::testing::PrintToString(shardSetEvents());
}

}  // namespace
}  // namespace shardscaler::e2e
