// What a query answer becomes: per-shard rates (pods mapped, series summed per pod, replicas
// averaged), the failure reasons, and the recommended shard count with its clamps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "shardscaler/ingestion/ingestion_result.h"

namespace shardscaler::ingestion {
namespace ingestion_result_test {
namespace {

using planner::TargetKind;
using promql::Labels;
using promql::QueryResult;

QueryResult vectorOf(const std::vector<std::pair<Labels, double>>& series) {
  promql::Vector v;
  for (const auto& [labels, value] : series) v.push_back({labels, {{}, value}});
  return QueryResult{.data = std::move(v)};
}

Labels pod(std::string name) { return Labels{{"pod", std::move(name)}}; }

TEST(IngestionResultTest, ReplicasOfAShardAreAveragedAndShardsOrderedByIndex) {
  auto rates = shardRates(vectorOf({{pod("prometheus-main-shard-2-0"), 300},
                                    {pod("prometheus-main-0"), 100},
                                    {pod("prometheus-main-1"), 120},
                                    {pod("prometheus-main-shard-1-1"), 210},
                                    {pod("prometheus-main-shard-1-0"), 190}}),
                          TargetKind::Prometheus, "main");
  ASSERT_TRUE(rates.has_value()) << rates.error().message;
  EXPECT_EQ(*rates, (std::vector<ShardRate>{{0, 110}, {1, 200}, {2, 300}}));
}

TEST(IngestionResultTest, SeriesOfOnePodAreSummedBeforeAveraging) {
  // An override without `sum by (pod)` returns one series per job of the same pod.
  auto rates = shardRates(vectorOf({{Labels{{"pod", "prometheus-main-0"}, {"job", "a"}}, 40},
                                    {Labels{{"pod", "prometheus-main-0"}, {"job", "b"}}, 60},
                                    {Labels{{"pod", "prometheus-main-1"}, {"job", "a"}}, 120}}),
                          TargetKind::Prometheus, "main");
  ASSERT_TRUE(rates.has_value());
  EXPECT_EQ(*rates, (std::vector<ShardRate>{{0, 110}}));
}

TEST(IngestionResultTest, OtherPodsUnlabelledSeriesAndNonFiniteValuesAreIgnored) {
  auto rates = shardRates(
      vectorOf({{pod("prometheus-main-0"), 100},
                {pod("prometheus-other-0"), 1e9},
                {pod("prom-agent-main-0"), 1e9},
                {Labels{{"job", "x"}}, 1e9},
                {pod("prometheus-main-shard-1-0"), std::nan("")},
                {pod("prometheus-main-shard-2-0"), std::numeric_limits<double>::infinity()},
                {pod("prometheus-main-shard-3-0"), -5}}),
      TargetKind::Prometheus, "main");
  ASSERT_TRUE(rates.has_value());
  EXPECT_EQ(*rates, (std::vector<ShardRate>{{0, 100}}));
}

TEST(IngestionResultTest, AnEmptyVectorIsEmptyResult) {
  auto rates = shardRates(vectorOf({}), TargetKind::Prometheus, "main");
  ASSERT_FALSE(rates.has_value());
  EXPECT_EQ(rates.error().reason, kReasonEmptyResult);
  EXPECT_NE(rates.error().message.find("Prometheus main"), std::string::npos)
      << rates.error().message;
}

TEST(IngestionResultTest, SeriesOfNoShardOfTheTargetAreNoShardSeries) {
  auto rates = shardRates(vectorOf({{Labels{{"job", "x"}}, 5}, {pod("prometheus-other-0"), 7}}),
                          TargetKind::Prometheus, "main");
  ASSERT_FALSE(rates.has_value());
  EXPECT_EQ(rates.error().reason, kReasonNoShardSeries);
  EXPECT_NE(rates.error().message.find("prometheus-other-0"), std::string::npos)
      << rates.error().message;
}

TEST(IngestionResultTest, AScalarIsUnexpectedResultType) {
  auto rates =
      shardRates(QueryResult{.data = promql::Scalar{{{}, 4}}}, TargetKind::Prometheus, "main");
  ASSERT_FALSE(rates.has_value());
  EXPECT_EQ(rates.error().reason, kReasonUnexpectedResultType);
  EXPECT_NE(rates.error().message.find("scalar"), std::string::npos) << rates.error().message;
}

TEST(IngestionResultTest, QueryErrorsMapToConditionReasons) {
  using promql::ErrorKind;
  const std::vector<std::pair<ErrorKind, std::string_view>> cases = {
      {ErrorKind::Transport, kReasonPrometheusUnreachable},
      {ErrorKind::ClientTimeout, kReasonQueryTimeout},
      {ErrorKind::Timeout, kReasonQueryTimeout},
      {ErrorKind::Canceled, kReasonQueryTimeout},
      {ErrorKind::BadData, kReasonInvalidQuery},
      {ErrorKind::Config, kReasonInvalidPrometheusURL},
      {ErrorKind::Execution, kReasonQueryFailed},
      {ErrorKind::Unavailable, kReasonQueryFailed},
      {ErrorKind::Http, kReasonQueryFailed},
      {ErrorKind::Decode, kReasonQueryFailed},
  };
  for (const auto& [kind, reason] : cases) {
    auto f = failureOfError(promql::makeError(kind, "what happened", 503));
    EXPECT_EQ(f.reason, reason) << promql::toString(kind);
    EXPECT_NE(f.message.find("what happened"), std::string::npos) << f.message;
  }
}

IngestionTarget withClamps(std::optional<int64_t> per_shard, std::optional<int64_t> min,
                           std::optional<int64_t> max, std::optional<size_t> zones = {}) {
  IngestionTarget t;
  t.target_samples_per_shard = per_shard;
  t.min_shards = min;
  t.max_shards = max;
  t.zones = zones;
  return t;
}

TEST(IngestionResultTest, RecommendationIsTheCeilingOfTotalOverTarget) {
  EXPECT_EQ(recommendedShards(1.2e6, withClamps(500000, {}, {})), 3);
  EXPECT_EQ(recommendedShards(1.0e6, withClamps(500000, {}, {})), 2);
  EXPECT_EQ(recommendedShards(1.0e6 + 0.5, withClamps(500000, {}, {})), 3);
}

TEST(IngestionResultTest, RecommendationIsClampedLikeTheDesiredShardCount) {
  EXPECT_EQ(recommendedShards(0, withClamps(500000, {}, {})), 1);      // minShards default 1
  EXPECT_EQ(recommendedShards(1e6, withClamps(500000, 4, {})), 4);     // below min
  EXPECT_EQ(recommendedShards(1e9, withClamps(500000, 1, 50)), 50);    // above max
  EXPECT_EQ(recommendedShards(1e300, withClamps(1, 1, 1000)), 1000);   // no overflow
  EXPECT_EQ(recommendedShards(2e6, withClamps(500000, 1, 50, 3)), 6);  // 4 -> zone multiple
  EXPECT_EQ(recommendedShards(1e5, withClamps(500000, 1, 50, 3)), 3);  // never below zones
  EXPECT_EQ(recommendedShards(1e9, withClamps(500000, 1, 10, 3)), 9);  // largest multiple <= max
}

TEST(IngestionResultTest, NoRecommendationWithoutTargetOrWithInvalidClamps) {
  EXPECT_EQ(recommendedShards(1e6, withClamps({}, {}, {})), std::nullopt);
  EXPECT_EQ(recommendedShards(1e6, withClamps(500000, 5, 2)), std::nullopt);
  EXPECT_EQ(recommendedShards(1e6, withClamps(500000, 1, 2, 3)), std::nullopt);
  EXPECT_EQ(recommendedShards(std::nan(""), withClamps(500000, {}, {})), std::nullopt);
}

}  // namespace
}  // namespace ingestion_result_test
}  // namespace shardscaler::ingestion
