// Reading a drain from Prometheus's answers (docs/design.md §15): a pod is drained only with
// evidence, and absence of evidence is never drained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "shardscaler/ingestion/drain_check.h"

namespace shardscaler::ingestion {
namespace {

using namespace std::chrono_literals;
using promql::Labels;
using promql::QueryResult;
using ::testing::HasSubstr;

QueryResult vectorOf(const std::vector<std::pair<std::string, double>>& by_pod) {
  promql::Vector v;
  for (const auto& [pod, value] : by_pod) {
    v.push_back({.metric = Labels{{"namespace", "mon"}, {"pod", pod}}, .point = {.value = value}});
  }
  return {.data = std::move(v)};
}

const DrainShard kShard{.stateful_set = "prometheus-main-shard-2", .replicas = 2};
const std::string kPod0 = "prometheus-main-shard-2-0";
const std::string kPod1 = "prometheus-main-shard-2-1";

retention::DrainReading lagReading(QueryResult up, QueryResult lag) {
  return readDrain(kShard, {.up = std::move(up), .evidence = std::move(lag)}, false, 30s);
}

TEST(DrainCheck, QueuesCaughtUpOnEveryPodAreDrained) {
  auto r = lagReading(vectorOf({{kPod0, 1}, {kPod1, 1}}), vectorOf({{kPod0, 3}, {kPod1, 12}}));
  EXPECT_TRUE(r.drained) << r.reason;
  EXPECT_EQ(r.lag_seconds, 12);
}

TEST(DrainCheck, APodLaggingPastMaxLagIsNotDrainedAndTheLargestLagIsReported) {
  auto r = lagReading(vectorOf({{kPod0, 1}, {kPod1, 1}}), vectorOf({{kPod0, 31}, {kPod1, 90}}));
  EXPECT_FALSE(r.drained);
  EXPECT_EQ(r.lag_seconds, 90);
  EXPECT_THAT(r.reason, HasSubstr(kPod0));
  EXPECT_THAT(r.reason, HasSubstr("by more than 30s")) << "the same text whatever the lag";
}

TEST(DrainCheck, AScrapedPodWithoutAnyQueueHasNothingToShip) {
  auto r = lagReading(vectorOf({{kPod0, 1}, {kPod1, 1}}), vectorOf({}));
  EXPECT_TRUE(r.drained) << r.reason;
  EXPECT_FALSE(r.lag_seconds);
}

TEST(DrainCheck, APodNotScrapedIsNeverDrained) {
  auto missing = lagReading(vectorOf({{kPod0, 1}}), vectorOf({{kPod0, 0}}));
  EXPECT_FALSE(missing.drained);
  EXPECT_FALSE(missing.failed) << "a pod that is down is the shard's state, not a failed read";
  EXPECT_THAT(missing.reason, HasSubstr(kPod1 + " is not scraped (up missing)"));
  auto down = lagReading(vectorOf({{kPod0, 1}, {kPod1, 0}}), vectorOf({{kPod0, 0}}));
  EXPECT_FALSE(down.drained);
  EXPECT_THAT(down.reason, HasSubstr("up not 1"));
}

TEST(DrainCheck, AStatefulSetWithoutReplicasHasNoEvidenceAndIsNotDrained) {
  const DrainShard scaled_to_zero{.stateful_set = kShard.stateful_set, .replicas = 0};
  auto r = readDrain(scaled_to_zero, {.up = vectorOf({}), .evidence = vectorOf({})}, false, 30s);
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr("has no replicas"));
}

TEST(DrainCheck, AFailedQueryIsNeverDrained) {
  auto failed = readDrain(
      kShard,
      {.up = vectorOf({{kPod0, 1}, {kPod1, 1}}),
       .evidence = std::unexpected(promql::makeError(promql::ErrorKind::Transport, "refused"))},
      false, 30s);
  EXPECT_FALSE(failed.drained);
  EXPECT_TRUE(failed.failed) << "no evidence either way: it must not count toward the timeout";
  EXPECT_THAT(failed.reason, HasSubstr("the lag query failed"));
  EXPECT_FALSE(failed.invalid_condition) << "only a condition of the user's can be invalid";
}

TEST(DrainCheck, AnythingButAVectorOfFiniteValuesOnePerPodIsNotDrained) {
  const QueryResult up = vectorOf({{kPod0, 1}, {kPod1, 1}});
  EXPECT_FALSE(lagReading(up, QueryResult{.data = promql::Scalar{}}).drained);
  auto nan = lagReading(up, vectorOf({{kPod0, std::nan("")}, {kPod1, 0}}));
  EXPECT_FALSE(nan.drained);
  EXPECT_THAT(nan.reason, HasSubstr("not a finite number"));
  EXPECT_FALSE(
      lagReading(up, vectorOf({{kPod0, std::numeric_limits<double>::infinity()}, {kPod1, 0}}))
          .drained);
  EXPECT_TRUE(nan.failed);
  auto twice = lagReading(up, vectorOf({{kPod0, 0}, {kPod0, 1}, {kPod1, 0}}));
  EXPECT_FALSE(twice.drained);
  EXPECT_TRUE(twice.failed);
  EXPECT_THAT(twice.reason, HasSubstr("2 series"));
}

TEST(DrainCheck, AUserConditionHoldsOnlyWithASeriesForEveryPod) {
  const QueryResult up = vectorOf({{kPod0, 1}, {kPod1, 1}});
  EXPECT_TRUE(
      readDrain(kShard, {.up = up, .evidence = vectorOf({{kPod0, 5}, {kPod1, 0}})}, true, 30s)
          .drained)
      << "a filter's value may be 0";
  auto partial = readDrain(kShard, {.up = up, .evidence = vectorOf({{kPod0, 5}})}, true, 30s);
  EXPECT_FALSE(partial.drained);
  EXPECT_THAT(partial.reason, HasSubstr("does not hold for pod " + kPod1));
  auto bad =
      readDrain(kShard,
                {.up = up,
                 .evidence = std::unexpected(promql::makeError(
                     promql::ErrorKind::BadData, "parse error: unexpected end of input", 400))},
                true, 30s);
  EXPECT_FALSE(bad.drained);
  EXPECT_TRUE(bad.invalid_condition);
  EXPECT_THAT(bad.reason, HasSubstr("parse error"));
}

// The drain's Prometheus is user input too: a URL the admin's allow-list does not match is never
// queried, and every shard reads as not drained, saying why.
TEST(DrainCheck, AUrlTheAllowListRefusesIsNeverQueried) {
  int clients = 0;
  DrainChecker checker(
      [&](const std::string&,
          std::chrono::milliseconds) -> promql::Result<std::shared_ptr<promql::PromQuery>> {
        ++clients;
        return std::unexpected(promql::makeError(promql::ErrorKind::Transport, "unused"));
      },
      std::chrono::seconds(1), PrometheusUrlPolicy::defaults());
  retention::DrainPolicy policy;
  policy.enabled = true;
  policy.prometheus_url = "http://169.254.169.254:9090";
  const std::vector<DrainShard> shards{{.stateful_set = "prometheus-main-shard-2"}};
  const auto readings = checker.check(policy, "mon", shards);
  ASSERT_EQ(readings.size(), 1u);
  const auto& reading = readings.at("prometheus-main-shard-2");
  EXPECT_FALSE(reading.drained);
  EXPECT_TRUE(reading.failed);
  EXPECT_THAT(reading.reason, HasSubstr("--prometheus-url-allow"));
  EXPECT_EQ(clients, 0);
}

TEST(DrainCheck, QueriesSelectTheShardsPodsEscaped) {
  EXPECT_EQ(shardPodRegex("prometheus-main.x-shard-2"),
            R"q(prometheus-main\.x-shard-2-(0|[1-9][0-9]*))q");
  EXPECT_EQ(drainUpQuery("mon", "a-(0|1)"),
            R"q(min by (namespace, pod) (up{namespace="mon",pod=~"a-(0|1)"}))q");
  EXPECT_THAT(drainLagQuery("mon", "a"),
              HasSubstr("prometheus_remote_storage_queue_highest_sent_timestamp_seconds"));
  EXPECT_EQ(drainConditionQuery(R"q(x{namespace="$NAMESPACE",pod=~"$POD_REGEX"} > 0)q", "mon",
                                R"q(a\.b-(0))q"),
            R"q(x{namespace="mon",pod=~"a\\.b-(0)"} > 0)q");
}

}  // namespace
}  // namespace shardscaler::ingestion
