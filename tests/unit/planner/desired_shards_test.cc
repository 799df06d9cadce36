#include "shardscaler/planner/desired_shards.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shardscaler::planner {
namespace {

int32_t want(std::optional<int64_t> shards, std::optional<int64_t> min, std::optional<int64_t> max,
             std::optional<size_t> zones = std::nullopt) {
  auto d = desiredShards(shards, min, max, zones);
  if (!d) {
    ADD_FAILURE() << d.error().front().describe();
    return -1;
  }
  return d->want;
}

std::string firstError(std::optional<int64_t> shards, std::optional<int64_t> min,
                       std::optional<int64_t> max, std::optional<size_t> zones = std::nullopt) {
  auto d = desiredShards(shards, min, max, zones);
  if (d) return "no error, want " + std::to_string(d->want);
  return d.error().front().describe();
}

TEST(DesiredShards, ClampsToMinAndMax) {
  EXPECT_EQ(want(3, std::nullopt, std::nullopt), 3);
  EXPECT_EQ(want(3, 1, 50), 3);
  EXPECT_EQ(want(60, 1, 50), 50);
  EXPECT_EQ(want(1, 2, 50), 2);
  EXPECT_EQ(want(0, std::nullopt, std::nullopt), 1);  // minShards defaults to 1
  EXPECT_EQ(want(5, 5, 5), 5);
  EXPECT_EQ(want(60, std::nullopt, std::nullopt), 50);  // maxShards defaults to 50, as in the CRD
  EXPECT_EQ(want(1000, std::nullopt, 1000), 1000);
}

TEST(DesiredShards, SaysWhenItClamps) {
  auto above = desiredShards(60, 1, 50, std::nullopt);
  ASSERT_TRUE(above.has_value());
  EXPECT_EQ(above->clamp_note, "spec.shards 60 is above maxShards 50; using 50");
  auto below = desiredShards(0, 2, 50, std::nullopt);
  ASSERT_TRUE(below.has_value());
  EXPECT_EQ(below->clamp_note, "spec.shards 0 is below minShards 2; using 2");
  auto inside = desiredShards(3, 1, 50, std::nullopt);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->clamp_note, "");
  EXPECT_EQ(inside->rounding_note, "");
}

TEST(DesiredShards, TopologyRoundsUpToAMultipleOfTheZones) {
  EXPECT_EQ(want(4, std::nullopt, std::nullopt, 3), 6);
  EXPECT_EQ(want(2, std::nullopt, std::nullopt, 3), 3);  // never below the zone count
  EXPECT_EQ(want(1, std::nullopt, std::nullopt, 3), 3);
  EXPECT_EQ(want(6, std::nullopt, std::nullopt, 3), 6);
  EXPECT_EQ(want(7, std::nullopt, 9, 3), 9);
  EXPECT_EQ(want(5, std::nullopt, std::nullopt, 1), 5);
  EXPECT_EQ(want(4, 4, std::nullopt, 3), 6);
  auto d = desiredShards(4, std::nullopt, std::nullopt, 3);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->rounding_note, "4 shards rounded up to 6, a multiple of the 3 topology zones");
}

TEST(DesiredShards, TopologyRoundsDownWhenUpPassesMax) {
  auto d = desiredShards(7, std::nullopt, 8, 3);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->want, 6);
  EXPECT_EQ(d->rounding_note,
            "7 shards rounded down to 6, a multiple of the 3 topology zones (rounding up to 9 "
            "would pass maxShards 8)");
  // Clamped first, then rounded: 20 -> 8 -> 6.
  auto c = desiredShards(20, std::nullopt, 8, 3);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->clamped, 8);
  EXPECT_EQ(c->want, 6);
  EXPECT_FALSE(c->clamp_note.empty());
}

TEST(DesiredShards, TopologyWithNoMultipleInRangeIsInvalid) {
  EXPECT_EQ(firstError(7, 7, 8, 3),
            "spec.maxShards: no multiple of the 3 topology zones lies within [7, 8]");
  EXPECT_EQ(firstError(2, std::nullopt, 2, 3),
            "spec.maxShards: no multiple of the 3 topology zones lies within [3, 2]");
  EXPECT_EQ(firstError(2, std::nullopt, std::nullopt, 0),
            "target.spec.shardingStrategy.topology.values: Topology mode needs at least one zone");
}

TEST(DesiredShards, BadInputIsNamed) {
  EXPECT_EQ(firstError(std::nullopt, std::nullopt, std::nullopt), "spec.shards: required");
  EXPECT_EQ(firstError(-1, std::nullopt, std::nullopt),
            "spec.shards: must not be negative, got -1");
  EXPECT_EQ(firstError(int64_t{1} << 40, std::nullopt, std::nullopt),
            "spec.shards: must be at most 1000, got 1099511627776");
  EXPECT_EQ(firstError(1001, std::nullopt, std::nullopt),
            "spec.shards: must be at most 1000, got 1001");
  EXPECT_EQ(firstError(3, std::nullopt, 1001), "spec.maxShards: must be at most 1000, got 1001");
  EXPECT_EQ(firstError(3, 0, std::nullopt), "spec.minShards: must be at least 1, got 0");
  EXPECT_EQ(firstError(3, std::nullopt, 0), "spec.maxShards: must be at least 1, got 0");
  EXPECT_EQ(firstError(3, 5, 2), "spec.maxShards: must not be below spec.minShards (2 < 5)");
  EXPECT_EQ(firstError(3, int64_t{1} << 40, std::nullopt),
            "spec.minShards: must be at most 1000, got 1099511627776");
  auto all = desiredShards(-1, 0, 0, std::nullopt);
  ASSERT_FALSE(all.has_value());
  EXPECT_EQ(all.error().size(), 3u);
}

}  // namespace
}  // namespace shardscaler::planner
