// The operator's own shard retention, as the emulator computes and reads its deadline.
#include <gtest/gtest.h>

#include "shard_retention.h"

namespace shardscaler::emulator {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const auto kNow = std::chrono::sys_days{std::chrono::year{2026} / 11 / 22} + 10h;

TEST(ShardRetention, TheDeadlineTakesTheRetentionPeriodThenTheRetentionThen24Hours) {
  EXPECT_EQ(
      retentionDeadline({{"spec",
                          {{"shardRetentionPolicy", {{"retain", {{"retentionPeriod", "2h"}}}}},
                           {"retention", "10d"}}}},
                        kNow),
      "2026-11-22T12:00:00Z");
  EXPECT_EQ(retentionDeadline({{"spec", {{"retention", "1d"}}}}, kNow), "2026-11-23T10:00:00Z");
  EXPECT_EQ(retentionDeadline({{"spec", Json::object()}}, kNow), "2026-11-23T10:00:00Z");
  EXPECT_EQ(retentionDeadline({{"spec", {{"retentionSize", "10GB"}}}}, kNow),
            "0001-01-01T00:00:00Z");
  EXPECT_EQ(
      retentionDeadline(
          {{"spec", {{"shardRetentionPolicy", {{"retain", {{"retentionPeriod", "0"}}}}}}}}, kNow),
      "0001-01-01T00:00:00Z");
}

TEST(ShardRetention, ADeadlineIsReadBackNeverOrRefused) {
  EXPECT_EQ(parseDeadline("2026-11-22T12:00:00Z"), kNow + 2h);
  EXPECT_EQ(parseDeadline("0001-01-01T00:00:00Z"), std::chrono::system_clock::time_point{});
  EXPECT_FALSE(parseDeadline("tomorrow"));
  EXPECT_EQ(parsePrometheusDuration("1h30m"), std::chrono::milliseconds(90 * 60 * 1000));
  EXPECT_FALSE(parsePrometheusDuration("1.5h"));
}

}  // namespace
}  // namespace shardscaler::emulator
