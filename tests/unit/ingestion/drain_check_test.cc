// Reading a drain from a Prometheus's answers (docs/design/drain.md): which series say what of each
// pod, the queries that ask for them, and the checker that sends them. The rules on what the
// series mean are drain_evidence's (drain_evidence_test.cc).
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
using Time = std::chrono::system_clock::time_point;

constexpr double kNow = 1'800'000'000;
const DrainShard kShard{
    .stateful_set = "prometheus-main-shard-2",
    .replicas = 2,
    .detached_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'799'999'000)),
    .remote_writes = 1};
const std::string kPod0 = "prometheus-main-shard-2-0";
const std::string kPod1 = "prometheus-main-shard-2-1";
const std::vector<SurvivingShard> kSurvivors = {
    {.stateful_set = "prometheus-main", .replicas = 1},
    {.stateful_set = "prometheus-main-shard-1", .replicas = 1}};

promql::VectorSample sample(Labels labels, double value) {
  return {
      .metric = std::move(labels),
      .point = {.timestamp = promql::Timestamp(std::chrono::seconds(static_cast<int64_t>(kNow))),
                .value = value}};
}

QueryResult byPod(const std::vector<std::pair<std::string, double>>& values) {
  promql::Vector v;
  for (const auto& [pod, value] : values) {
    v.push_back(sample(Labels{{"namespace", "mon"}, {"pod", pod}}, value));
  }
  return {.data = std::move(v)};
}

promql::VectorSample queueSeries(const std::string& pod, const std::string& metric, double value,
                                 const std::string& remote = "receiver") {
  return sample(Labels{{"__name__", metric},
                       {"namespace", "mon"},
                       {"pod", pod},
                       {"remote_name", remote},
                       {"url", "http://receiver/api/v1/write"}},
                value);
}

// One queue a pod that sent up to `sent` of what it appended up to `appended`.
void addPod(promql::Vector& v, const std::string& pod, double appended, double sent,
            double pending = 0) {
  v.push_back(sample(Labels{{"__name__", "prometheus_remote_storage_highest_timestamp_in_seconds"},
                            {"namespace", "mon"},
                            {"pod", pod}},
                     appended));
  v.push_back(queueSeries(pod, "prometheus_remote_storage_samples_pending", pending));
  v.push_back(
      queueSeries(pod, "prometheus_remote_storage_queue_highest_sent_timestamp_seconds", sent));
}

promql::Result<QueryResult> failed(promql::ErrorKind kind = promql::ErrorKind::Transport) {
  return std::unexpected(promql::makeError(kind, "connection refused"));
}

struct Answers {
  promql::Result<QueryResult> up = byPod({{kPod0, 1}, {kPod1, 1}});
  promql::Result<QueryResult> prometheus = byPod({{kPod0, 1.7e9}, {kPod1, 1.7e9}});
  promql::Result<QueryResult> evidence;
  std::optional<promql::Result<QueryResult>> reloads;

  planner::DrainReading read(bool custom = false) const {
    return readDrains(
               std::span(&kShard, 1), kSurvivors,
               {.up = up, .prometheus = prometheus, .evidence = evidence, .reloads = reloads},
               custom, 30s)
        .at(kShard.stateful_set);
  }
};

QueryResult caughtUp() {
  promql::Vector v;
  addPod(v, kPod0, kNow - 2, kNow - 4);
  addPod(v, kPod1, kNow - 2, kNow - 14);
  return {.data = std::move(v)};
}

TEST(DrainCheck, TheAnswersAreReadPodByPodAndQueueByQueue) {
  const auto r = Answers{.evidence = caughtUp()}.read();
  EXPECT_TRUE(r.drained) << r.reason;
  EXPECT_EQ(r.lag_seconds, 12);

  promql::Vector pending;
  addPod(pending, kPod0, kNow - 50, kNow - 55, 200);  // lag from the evaluation time: 55 s
  addPod(pending, kPod1, kNow - 2, kNow - 2);
  const auto lagging = Answers{.evidence = QueryResult{.data = pending}}.read();
  EXPECT_FALSE(lagging.drained);
  EXPECT_EQ(lagging.lag_seconds, 55);
}

// A config-reloader scraped as up beside a Prometheus port nobody scrapes: up is 1, and there is
// neither a Prometheus start nor any remote-storage series for the pod.
TEST(DrainCheck, ASidecarScrapedAloneIsNotDrained) {
  const auto r = Answers{.prometheus = byPod({{kPod1, 1.7e9}}),
                         .evidence = QueryResult{.data = promql::Vector{}}}
                     .read();
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr(kPod0 + "'s Prometheus itself is not scraped"));
}

TEST(DrainCheck, AFailedQueryFailsTheReading) {
  for (int which = 0; which < 3; ++which) {
    Answers answers{.evidence = caughtUp()};
    (which == 0 ? answers.up : which == 1 ? answers.prometheus : answers.evidence) = failed();
    const auto r = answers.read();
    EXPECT_FALSE(r.drained) << which;
    EXPECT_TRUE(r.failed) << which;
    EXPECT_THAT(r.reason, HasSubstr("failed: ")) << which;
    EXPECT_FALSE(r.invalid_condition) << "only a condition of the user's can be invalid";
  }
  const auto scalar = Answers{.evidence = QueryResult{.data = promql::Scalar{}}}.read();
  EXPECT_TRUE(scalar.failed);
  EXPECT_THAT(scalar.reason, HasSubstr("not a vector"));
}

TEST(DrainCheck, TwoSeriesOfOneQueueOrANaNFailTheReading) {
  QueryResult twice = caughtUp();
  std::get<promql::Vector>(twice.data)
      .push_back(queueSeries(kPod0, "prometheus_remote_storage_samples_pending", 0));
  const auto t = Answers{.evidence = twice}.read();
  EXPECT_TRUE(t.failed);
  EXPECT_THAT(t.reason, HasSubstr("two series of prometheus_remote_storage_samples_pending"));

  QueryResult nan = caughtUp();
  std::get<promql::Vector>(nan.data)[1].point.value = std::nan("");
  EXPECT_TRUE(Answers{.evidence = nan}.read().failed);
  const Answers infinite{
      .prometheus = byPod({{kPod0, std::numeric_limits<double>::infinity()}, {kPod1, 1}}),
      .evidence = caughtUp()};
  EXPECT_TRUE(infinite.read().failed);
}

TEST(DrainCheck, TwoQueuesOfAPodAreTwoQueues) {
  QueryResult two = caughtUp();
  auto& v = std::get<promql::Vector>(two.data);
  v.push_back(queueSeries(kPod0, "prometheus_remote_storage_samples_pending", 0, "backup"));
  v.push_back(queueSeries(kPod0, "prometheus_remote_storage_queue_highest_sent_timestamp_seconds",
                          kNow - 60, "backup"));
  const auto r = Answers{.evidence = two}.read();
  EXPECT_FALSE(r.drained);
  EXPECT_EQ(r.lag_seconds, 58);
}

TEST(DrainCheck, AUserConditionIsReadPerPodAndAQueryPrometheusRefusesIsInvalid) {
  EXPECT_TRUE(Answers{.evidence = byPod({{kPod0, 5}, {kPod1, 0}})}.read(true).drained);
  const auto partial = Answers{.evidence = byPod({{kPod0, 5}})}.read(true);
  EXPECT_FALSE(partial.drained);
  EXPECT_THAT(partial.reason, HasSubstr("does not hold for pod " + kPod1));
  const auto bad =
      Answers{.evidence = std::unexpected(promql::makeError(
                  promql::ErrorKind::BadData, "parse error: unexpected end of input", 400))}
          .read(true);
  EXPECT_FALSE(bad.drained);
  EXPECT_TRUE(bad.invalid_condition);
  EXPECT_THAT(bad.reason, HasSubstr("parse error"));
}

TEST(DrainCheck, TheSurvivorsReloadIsTheirEarliestAndNeedsEveryPod) {
  Answers answers{
      .evidence = caughtUp(),
      .reloads = byPod({{"prometheus-main-0", kNow - 3}, {"prometheus-main-shard-1-0", kNow - 9}})};
  EXPECT_EQ(
      answers.read().survivors_reloaded_at,
      std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<int64_t>(kNow - 9))));
  answers.reloads = byPod({{"prometheus-main-0", kNow - 3}});
  EXPECT_EQ(answers.read().survivors_reloaded_at, std::nullopt);
  answers.reloads = failed();
  EXPECT_EQ(answers.read().survivors_reloaded_at, std::nullopt);
  answers.reloads.reset();
  EXPECT_EQ(answers.read().survivors_reloaded_at, std::nullopt);
}

// A PromQuery that answers each query from a table, by the metric it names, and records them.
class TablePromQuery final : public promql::PromQuery {
 public:
  promql::Result<QueryResult> query(const promql::InstantQuery& q) override {
    asked.push_back(q.query);
    for (const auto& [needle, answer] : table) {
      if (q.query.find(needle) != std::string::npos) return answer;
    }
    return failed();
  }
  std::vector<std::pair<std::string, promql::Result<QueryResult>>> table;
  std::vector<std::string> asked;
};

TEST(DrainCheck, TheCheckerAsksOnceForEveryShardAndTheSurvivors) {
  auto prom = std::make_shared<TablePromQuery>();
  prom->table = {
      {"up{", byPod({{kPod0, 1}, {kPod1, 1}})},
      {"process_start_time_seconds", byPod({{kPod0, 1.7e9}, {kPod1, 1.7e9}})},
      {"prometheus_remote_storage_", caughtUp()},
      {"prometheus_config_last_reload_success_timestamp_seconds",
       byPod({{"prometheus-main-0", kNow - 1}, {"prometheus-main-shard-1-0", kNow - 1}})}};
  DrainChecker checker([&](const std::string&, std::chrono::milliseconds)
                           -> promql::Result<std::shared_ptr<promql::PromQuery>> { return prom; },
                       1s, PrometheusUrlPolicy::defaults());
  planner::DrainPolicy policy;
  policy.enabled = true;
  policy.prometheus_url = "http://prometheus.monitoring.svc:9090";
  const auto readings =
      checker.check(policy, {.source = {.ns = "mon"}, .shards = {kShard}, .survivors = kSurvivors});
  ASSERT_EQ(readings.size(), 1u);
  const auto& reading = readings.at(kShard.stateful_set);
  EXPECT_TRUE(reading.drained) << reading.reason;
  EXPECT_TRUE(reading.survivors_reloaded_at.has_value());
  ASSERT_EQ(prom->asked.size(), 4u);
  EXPECT_THAT(prom->asked[3],
              HasSubstr("prometheus-main-(0|[1-9][0-9]*)|prometheus-main-shard-1-"));
}

// The drain's Prometheus is user input too: a URL the admin's allow-list does not match is never
// queried, and every shard's reading fails, saying why.
TEST(DrainCheck, AUrlTheAllowListRefusesIsNeverQueried) {
  int clients = 0;
  DrainChecker checker(
      [&](const std::string&,
          std::chrono::milliseconds) -> promql::Result<std::shared_ptr<promql::PromQuery>> {
        ++clients;
        return std::unexpected(promql::makeError(promql::ErrorKind::Transport, "unused"));
      },
      std::chrono::seconds(1), PrometheusUrlPolicy::defaults());
  planner::DrainPolicy policy;
  policy.enabled = true;
  policy.prometheus_url = "http://169.254.169.254:9090";
  const auto readings = checker.check(
      policy, {.source = {.ns = "mon"}, .shards = {{.stateful_set = "prometheus-main-shard-2"}}});
  ASSERT_EQ(readings.size(), 1u);
  const auto& reading = readings.at("prometheus-main-shard-2");
  EXPECT_FALSE(reading.drained);
  EXPECT_TRUE(reading.failed);
  EXPECT_THAT(reading.reason, HasSubstr("--prometheus-url-allow"));
  EXPECT_EQ(clients, 0);
}

// Pods that answer as the shard's own: a fake reader of the shards' pods.
class OnePodShards final : public ShardMetricsSource {
 public:
  Expected<std::vector<ShardReading>> readTarget(const ShardSource& source) override {
    seen = source;
    if (!answer) return std::unexpected(std::string("cannot list the shards' pods: Forbidden"));
    std::vector<ShardReading> shards;
    for (const auto& [sts, reload] :
         {std::pair{"prometheus-main-shard-2", 0.0}, std::pair{"prometheus-main", 1.7e9 + 50}}) {
      const ShardPod pod{.name = std::string(sts) + "-0",
                         .ip = "10.0.0.1",
                         .web_port = 9090,
                         .run = PodRun::Running};
      PodMetrics metrics{.process_start = 1.7e9,
                         .prometheus_build_info = true,
                         .highest_appended = 1.7e9 + 100,
                         .queues = {{.remote_name = "r",
                                     .url = "http://r",
                                     .pending = 0,
                                     .highest_sent = 1.7e9 + 100 - lag}}};
      if (reload > 0) metrics.last_reload = reload;
      shards.push_back({.pods = {.stateful_set = sts, .pods = {pod}},
                        .readings = {{.pod = pod,
                                      .at = Time(std::chrono::seconds(1'700'000'100)),
                                      .answered = true,
                                      .metrics = metrics}}});
    }
    return shards;
  }
  Expected<std::vector<ShardReading>> readShards(const ShardSource&,
                                                 std::span<const nlohmann::json>) override {
    return std::unexpected(std::string("unused"));
  }
  std::string unsupported(const ShardSource&) const override { return refuse; }

  bool answer = true;
  double lag = 0;
  std::string refuse;
  ShardSource seen;
};

TEST(DrainCheck, WithoutAUrlTheShardsOwnPodsAreJudgedByTheSameRules) {
  int clients = 0;
  auto pods = std::make_shared<OnePodShards>();
  DrainChecker checker(
      [&](const std::string&,
          std::chrono::milliseconds) -> promql::Result<std::shared_ptr<promql::PromQuery>> {
        ++clients;
        return std::unexpected(promql::makeError(promql::ErrorKind::Transport, "unused"));
      },
      std::chrono::seconds(1), PrometheusUrlPolicy::defaults(), pods);
  planner::DrainPolicy policy;
  policy.enabled = true;
  const DrainRequest request{.source = {.ns = "mon", .target_name = "main", .shard_set = "main"},
                             .shards = {{.stateful_set = "prometheus-main-shard-2",
                                         .detached_at = Time(std::chrono::seconds(1'700'000'010)),
                                         .remote_writes = 1},
                                        {.stateful_set = "prometheus-main-shard-3",
                                         .detached_at = Time(std::chrono::seconds(1'700'000'010)),
                                         .remote_writes = 1}},
                             .survivors = {{.stateful_set = "prometheus-main"}}};
  auto readings = checker.check(policy, request);
  EXPECT_EQ(clients, 0);
  EXPECT_EQ(pods->seen, request.source);
  const auto& drained = readings.at("prometheus-main-shard-2");
  EXPECT_TRUE(drained.drained) << drained.reason;
  EXPECT_EQ(drained.lag_seconds, 0);
  EXPECT_EQ(drained.survivors_reloaded_at, Time(std::chrono::seconds(1'700'000'050)));
  // A due shard none of whose pods was read says nothing.
  const auto& unread = readings.at("prometheus-main-shard-3");
  EXPECT_FALSE(unread.drained);
  EXPECT_FALSE(unread.failed);

  pods->lag = 45;
  readings = checker.check(policy, request);
  EXPECT_FALSE(readings.at("prometheus-main-shard-2").drained);
  EXPECT_EQ(readings.at("prometheus-main-shard-2").lag_seconds, 45);
  // Nothing listed, or a web server shardscaler cannot talk to: failed readings, no evidence.
  pods->answer = false;
  readings = checker.check(policy, request);
  EXPECT_TRUE(readings.at("prometheus-main-shard-2").failed);
  EXPECT_EQ(readings.at("prometheus-main-shard-2").reason,
            "cannot list the shards' pods: Forbidden");
  pods->refuse = "requires a client certificate";
  readings = checker.check(policy, request);
  EXPECT_TRUE(readings.at("prometheus-main-shard-3").failed);
  EXPECT_EQ(readings.at("prometheus-main-shard-3").reason, "requires a client certificate");
}

TEST(DrainCheck, QueriesSelectTheShardsPodsEscaped) {
  EXPECT_EQ(shardPodRegex("prometheus-main.x-shard-2"),
            R"q(prometheus-main\.x-shard-2-(0|[1-9][0-9]*))q");
  EXPECT_EQ(drainUpQuery("mon", "a-(0|1)"),
            R"q(min by (namespace, pod) (up{namespace="mon",pod=~"a-(0|1)"}))q");
  EXPECT_EQ(drainPrometheusQuery("mon", "a"),
            R"q(max by (namespace, pod) (process_start_time_seconds{namespace="mon",pod=~"a"} )q"
            R"q(and on (namespace, pod, job, instance) prometheus_build_info{namespace="mon",)q"
            R"q(pod=~"a"}))q");
  EXPECT_EQ(drainQueuesQuery("mon", "a"),
            R"q(max by (__name__, namespace, pod, remote_name, url) ({__name__=~")q"
            R"q(prometheus_remote_storage_(samples_pending|queue_highest_sent_timestamp_seconds|)q"
            R"q(highest_timestamp_in_seconds)",namespace="mon",pod=~"a"}))q");
  EXPECT_THAT(drainReloadQuery("mon", "a"),
              HasSubstr("prometheus_config_last_reload_success_timestamp_seconds{"));
  EXPECT_EQ(drainConditionQuery(R"q(x{namespace="$NAMESPACE",pod=~"$POD_REGEX"} > 0)q", "mon",
                                R"q(a\.b-(0))q"),
            R"q(x{namespace="mon",pod=~"a\\.b-(0)"} > 0)q");
}

}  // namespace
}  // namespace shardscaler::ingestion
