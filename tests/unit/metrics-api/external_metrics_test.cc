// The metric values of a ShardSet's status: exact totals, the fail-safe refusals, staleness, and
// the claim that an HPA on the total computes status.recommendedShards.
#include "shardscaler/metrics_api/external_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace shardscaler::metrics_api {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr std::chrono::system_clock::time_point kNow{seconds(1'800'000'000)};
constexpr const char* kNowText = "2027-01-15T08:00:00Z";  // kNow

Json shardSet(std::vector<double> rates, int target_shards = -1,
              const std::string& last_update = kNowText) {
  Json per_shard = Json::array();
  for (size_t i = 0; i < rates.size(); ++i) {
    per_shard.push_back({{"index", i}, {"samplesPerSecond", rates[i]}});
  }
  return {{"metadata", {{"namespace", "monitoring"}, {"name", "main"}}},
          {"spec", {{"ingestion", {{"interval", "30s"}, {"targetSamplesPerShard", 1000}}}}},
          {"status",
           {{"targetShards", target_shards < 0 ? static_cast<int>(rates.size()) : target_shards},
            {"recommendedShards", 4},
            {"ingestion", {{"perShard", per_shard}, {"lastUpdate", last_update}}}}}};
}

TEST(ExternalMetrics, NowTextIsNow) {
  Json s = shardSet({1});
  ASSERT_TRUE(metricValue(s, MetricKind::SamplesPerSecond, kNow, {}).has_value());
  ASSERT_FALSE(metricValue(s, MetricKind::SamplesPerSecond, kNow + seconds(91), {}).has_value());
}

TEST(ExternalMetrics, TotalAndBusiestShardOfTheActiveShardsExactly) {
  // Shard 3 is retained (detached): it has a rate but is not active.
  Json s = shardSet({1200.25, 1000.1, 799.99, 5000}, 3);
  auto total = metricValue(s, MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_TRUE(total.has_value()) << total.error().message;
  EXPECT_EQ(total->value.milli, 3000340);
  EXPECT_EQ(total->value.toString(), "3000340m");
  EXPECT_EQ(total->shard_set, "main");
  EXPECT_EQ(total->timestamp, kNowText);
  auto busiest = metricValue(s, MetricKind::MaxShardSamplesPerSecond, kNow, {});
  ASSERT_TRUE(busiest.has_value());
  EXPECT_EQ(busiest->value.toString(), "1200250m");
  auto recommended = metricValue(s, MetricKind::RecommendedShards, kNow, {});
  ASSERT_TRUE(recommended.has_value());
  EXPECT_EQ(recommended->value.toString(), "4");
}

TEST(ExternalMetrics, ZeroIsAValueOnlyWhenMeasured) {
  auto v = metricValue(shardSet({0, 0}), MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->value.toString(), "0");
}

TEST(ExternalMetrics, FailsSafeInsteadOfGivingAValue) {
  Json no_status = shardSet({1});
  no_status.erase("status");
  EXPECT_EQ(metricValue(no_status, MetricKind::SamplesPerSecond, kNow, {}).error().reason,
            "NoRates");

  Json failed = shardSet({1});
  failed["status"]["ingestion"]["error"] = "query timed out";
  auto e = metricValue(failed, MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().reason, "QueryFailed");
  EXPECT_THAT(e.error().message, HasSubstr("query timed out"));

  auto missing = metricValue(shardSet({1, 2}, 4), MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().reason, "MissingShardRates");
  EXPECT_THAT(missing.error().message, HasSubstr("active shards 2 and 3"));

  Json no_target = shardSet({1});
  no_target["status"].erase("targetShards");
  EXPECT_EQ(metricValue(no_target, MetricKind::SamplesPerSecond, kNow, {}).error().reason,
            "TargetShardsUnknown");
  EXPECT_EQ(metricValue(shardSet({}, 0), MetricKind::SamplesPerSecond, kNow, {}).error().reason,
            "TargetShardsUnknown");

  Json no_recommendation = shardSet({1});
  no_recommendation["status"].erase("recommendedShards");
  EXPECT_TRUE(metricValue(no_recommendation, MetricKind::SamplesPerSecond, kNow, {}));
  EXPECT_EQ(metricValue(no_recommendation, MetricKind::RecommendedShards, kNow, {}).error().reason,
            "NoRecommendation");

  Json bad_time = shardSet({1}, 1, "yesterday");
  EXPECT_EQ(metricValue(bad_time, MetricKind::SamplesPerSecond, kNow, {}).error().reason,
            "NoRates");
}

TEST(ExternalMetrics, StalenessIsAMultipleOfTheIntervalWithAFloor) {
  EXPECT_EQ(maxRateAge(seconds(30), {}), seconds(90));
  EXPECT_EQ(maxRateAge(seconds(2), {}), seconds(10));
  EXPECT_EQ(maxRateAge(seconds(30), {.intervals = 1.5, .floor = seconds(1)}), seconds(45));

  Json s = shardSet({1, 2});
  EXPECT_TRUE(metricValue(s, MetricKind::SamplesPerSecond, kNow + seconds(90), {}));
  auto stale = metricValue(s, MetricKind::SamplesPerSecond, kNow + seconds(91), {});
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().reason, "StaleRates");
  EXPECT_THAT(stale.error().message, HasSubstr("91s ago, older than 90s"));
  // A shorter interval tightens the bound.
  s["spec"]["ingestion"]["interval"] = "10s";
  EXPECT_FALSE(metricValue(s, MetricKind::SamplesPerSecond, kNow + seconds(31), {}));
}

TEST(ExternalMetrics, RatesAreExactInMilliUnits) {
  EXPECT_EQ(rateMilli(1234.57), 1234570);
  EXPECT_EQ(rateMilli(0.01), 10);
  EXPECT_EQ(rateMilli(999999.99), 999999990);
  EXPECT_EQ(rateMilli(kMaxShardSamplesPerSecond), int64_t{1'000'000'000'000'000});
  EXPECT_EQ((MilliQuantity{42000}).toString(), "42");
}

// Issue 24 item 4: a hostile PromQL answer (through status) or status itself bounds neither the
// loop over the active shards nor the arithmetic; both were unbounded (INT64 shards, UB on 1e300).
TEST(ExternalMetrics, WorkAndArithmeticAreBoundedWhateverTheStatusSays) {
  EXPECT_EQ(rateMilli(1e300), std::nullopt);
  EXPECT_EQ(rateMilli(kMaxShardSamplesPerSecond * 2), std::nullopt);
  EXPECT_EQ(rateMilli(std::nan("")), std::nullopt);
  EXPECT_EQ(rateMilli(-1), std::nullopt);

  // One more shard than a ShardSet may have, each with a rate: no value, not a 1001-shard loop.
  std::vector<double> rates(1001, 1.0);
  auto too_many = metricValue(shardSet(rates), MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().reason, "TargetShardsUnknown");
  EXPECT_THAT(too_many.error().message, HasSubstr("more than the 1000 shards"));
  Json huge = shardSet({1});
  huge["status"]["targetShards"] = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(metricValue(huge, MetricKind::SamplesPerSecond, kNow, {}).error().reason,
            "TargetShardsUnknown");

  // The largest rates on 1000 shards still add up; one past the bound is an error, not a value.
  EXPECT_TRUE(metricValue(shardSet(std::vector<double>(1000, kMaxShardSamplesPerSecond)),
                          MetricKind::SamplesPerSecond, kNow, {}));
  auto out_of_range = metricValue(shardSet({1, 1e300}), MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_FALSE(out_of_range.has_value());
  EXPECT_EQ(out_of_range.error().reason, "RateOutOfRange");
  EXPECT_THAT(out_of_range.error().message, HasSubstr("shard 1 of ShardSet monitoring/main"));
  // A retained shard's rate is not read.
  EXPECT_TRUE(metricValue(shardSet({1, 1e300}, 1), MetricKind::SamplesPerSecond, kNow, {}));

  // Found by fuzz_metric_value: a lastUpdate outside 1677..2262 overflowed the nanosecond time
  // point (UBSan), and a ShardSet without metadata or with a non-string error threw.
  for (const char* year : {"0100-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    EXPECT_EQ(
        metricValue(shardSet({1}, 1, year), MetricKind::SamplesPerSecond, kNow, {}).error().reason,
        "NoRates")
        << year;
  }
  Json no_metadata = shardSet({1});
  no_metadata.erase("metadata");
  auto unnamed = metricValue(no_metadata, MetricKind::SamplesPerSecond, kNow, {});
  ASSERT_TRUE(unnamed.has_value());
  EXPECT_EQ(unnamed->shard_set, "");
  Json numeric_error = shardSet({1});
  numeric_error["status"]["ingestion"]["error"] = 42;
  EXPECT_TRUE(metricValue(numeric_error, MetricKind::SamplesPerSecond, kNow, {}));

  Json recommended = shardSet({1});
  recommended["status"]["recommendedShards"] = int64_t{1} << 60;
  EXPECT_EQ(metricValue(recommended, MetricKind::RecommendedShards, kNow, {}).error().reason,
            "NoRecommendation");
}

// The HPA's arithmetic on shardscaler_samples_per_second with an AverageValue target equal to
// spec.ingestion.targetSamplesPerShard gives ceil(total / target), the unclamped
// status.recommendedShards, whenever the HPA acts (outside its 10% tolerance).
TEST(ExternalMetrics, AnHpaOnTheTotalWantsTheRecommendedShards) {
  const int64_t target = int64_t{1000} * 1000;  // 1000 samples/s per shard
  for (int32_t current = 1; current <= 12; ++current) {
    for (int64_t total = 0; total <= 15'000'000; total += 12'345) {
      const int32_t wanted = hpaAverageValueReplicas(total, target, current);
      const auto recommended =
          static_cast<int32_t>(std::ceil(static_cast<double>(total) / static_cast<double>(target)));
      const double ratio = static_cast<double>(total) / static_cast<double>(target * current);
      if (std::abs(1.0 - ratio) <= 0.1) {
        EXPECT_EQ(wanted, current);
      } else {
        EXPECT_EQ(wanted, recommended) << "total " << total << " current " << current;
      }
    }
  }
  // Inside the tolerance the HPA keeps 4 shards although ceil(4.3) is 5.
  EXPECT_EQ(hpaAverageValueReplicas(4'300'000, target, 4), 4);
  EXPECT_EQ(hpaAverageValueReplicas(4'500'000, target, 4), 5);
  // RecommendedShards with a target of 1 is taken exactly (ratio recommended/current).
  EXPECT_EQ(hpaAverageValueReplicas(6000, 1000, 3), 6);
}

TEST(ExternalMetrics, ValueListAsTheHpaReadsIt) {
  Json list =
      externalMetricValueList("shardscaler_samples_per_second",
                              {{.shard_set = "main", .value = {1500}, .timestamp = kNowText}});
  EXPECT_EQ(list["kind"], "ExternalMetricValueList");
  EXPECT_EQ(list["apiVersion"], "external.metrics.k8s.io/v1beta1");
  ASSERT_EQ(list["items"].size(), 1);
  EXPECT_EQ(list["items"][0]["metricName"], "shardscaler_samples_per_second");
  EXPECT_EQ(list["items"][0]["metricLabels"]["shardset"], "main");
  EXPECT_EQ(list["items"][0]["value"], "1500m");
  EXPECT_EQ(list["items"][0]["timestamp"], kNowText);
}

TEST(ExternalMetrics, EveryMetricHasANameAndADescription) {
  EXPECT_EQ(metricInfos().size(), 3);
  for (const MetricInfo& m : metricInfos()) {
    EXPECT_EQ(metricKindOf(m.name), m.kind);
    EXPECT_EQ(metricName(m.kind), m.name);
    EXPECT_FALSE(m.description.empty());
  }
  EXPECT_EQ(metricKindOf("cpu"), std::nullopt);
  EXPECT_THAT(metricNameList(), HasSubstr("shardscaler_samples_per_second, "));
}

}  // namespace
}  // namespace shardscaler::metrics_api
