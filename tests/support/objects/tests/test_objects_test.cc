#include <gtest/gtest.h>

#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

namespace shardscaler::test_objects {
namespace {

using planner::TargetKind;

TEST(TestObjectsTest, ShardNamesAreTheOperators) {
  EXPECT_EQ(shardName(0), "prometheus-main");
  EXPECT_EQ(shardName(3), "prometheus-main-shard-3");
  EXPECT_EQ(shardName(2, TargetKind::PrometheusAgent, "edge"), "prom-agent-edge-shard-2");
}

TEST(TestObjectsTest, FixedNowIsTheTwentySecondOfNovemberAtTen) {
  EXPECT_EQ(std::chrono::system_clock::to_time_t(fixedNow()), 1795341600);
}

TEST(TestObjectsTest, TheReadersAcceptEveryObject) {
  auto target = planner::parseTarget(targetJson(3), TargetKind::Prometheus);
  ASSERT_TRUE(target.has_value()) << target.error().describe();
  EXPECT_EQ(target->uid, kTargetUid);
  auto agent = planner::parseTarget(targetJson(2, {}, {.kind = TargetKind::PrometheusAgent}),
                                    TargetKind::PrometheusAgent);
  ASSERT_TRUE(agent.has_value()) << agent.error().describe();
  auto attached = planner::parseStatefulSet(attachedShard(2));
  ASSERT_TRUE(attached.has_value()) << attached.error().describe();
  EXPECT_EQ(attached->name, "prometheus-main-shard-2");
  auto retained = planner::parseStatefulSet(retainedShard(4, "2026-11-25T10:00:00Z"));
  ASSERT_TRUE(retained.has_value()) << retained.error().describe();
  EXPECT_EQ(retainedShard(4, "")["metadata"]["annotations"].size(), 1u);
  EXPECT_EQ(shardSetJson(3, {{"shards", nullptr}})["spec"].count("shards"), 0u);
}

}  // namespace
}  // namespace shardscaler::test_objects
