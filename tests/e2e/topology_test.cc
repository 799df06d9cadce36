// 5h: Topology sharding with 3 zones: the shard count becomes a multiple of the zone count,
// never below it, and a condition says why.
#include <gmock/gmock.h>

#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using ::testing::HasSubstr;

class TopologyTest : public ShardSetScenario {};

TEST_F(TopologyTest, ShardsRoundToMultiplesOfTheZoneCount) {
  const std::string topology =
      "  shardingStrategy:\n"
      "    mode: Topology\n"
      "    topology: {values: [zone-a, zone-b, zone-c]}\n";
  createPrometheus(3, topology);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));

  scaleWithKubectl(4);
  ASSERT_TRUE(waitForSettled(6, 0));
  auto ready = condition("Ready");
  ASSERT_TRUE(ready);
  EXPECT_THAT(ready->value("message", ""), HasSubstr("4 shards rounded up to 6"));
  EXPECT_THAT(ready->value("message", ""), HasSubstr("3 topology zones"));
  bool event = false;
  for (const auto& e : shardSetEvents()) {
    event |= e.starts_with("RoundedToZoneMultiple: 4 shards rounded up to 6");
  }
  EXPECT_TRUE(event) << ::testing::PrintToString(shardSetEvents());

  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(3, 3));
  ready = condition("Ready");
  ASSERT_TRUE(ready);
  EXPECT_THAT(ready->value("message", ""), HasSubstr("2 shards rounded up to 3"));
}

}  // namespace
}  // namespace shardscaler::e2e
