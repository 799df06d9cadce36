// The exported metrics: every family, removal of a deleted ShardSet's series, promtool's lint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void populateEveryFamily(Metrics& m) {
  m.setShardSamples("monitoring", "main", 0, 410000);
  m.setShardSamples("monitoring", "main", 1, 390000.5);
  m.setTotalSamples("monitoring", "main", 800000.5);
  m.setRecommendedShards("monitoring", "main", 2);
  m.setShardCounts("monitoring", "main", 2, 2, 1);
  m.observeReconcile(ReconcileResult::Success, 0.02);
  m.observeReconcile(ReconcileResult::Error, 1.5);
  m.incWatchRestart("statefulsets", "gone");
  m.observeKubeRequest("GET", "statefulsets.apps/v1", 200, 0.003);
  m.observeKubeRequest("PATCH", "prometheuses.monitoring.coreos.com/v1", 409, 0.01);
  m.observeKubeRequest("LIST", "statefulsets.apps/v1", 0, 30);
  m.observePromQuery(0.2);
  m.observePromQuery(10, "timeout");
  m.setWorkQueueDepth("shardsets", 3);
  m.incWorkQueueAdds("shardsets");
  m.incWorkQueueRetries("shardsets");
  m.setLeader(true);
  m.incDegraded("ingestion_query_failed");
  m.observeGuardReview("DELETE", "denied",
                       Metrics::GuardDenial{.rule = "ActiveShard",
                                            .requester = "service_account",
                                            .ns = "monitoring",
                                            .shardset = "main"},
                       0.004);
  m.observeGuardReview("UPDATE", "allowed", std::nullopt, 0.001);
  m.observeGuardReview("unknown", "bad_request", std::nullopt, 0.0001);
  m.setShardSetConditions(
      "monitoring", "main",
      std::vector<Metrics::ConditionState>{{"Ready", "True", "ShardsReady"},
                                           {"Degraded", "False", "AsExpected"}});
  m.setTargetPaused("monitoring", "main", "Prometheus", "main", 1795000000);
  m.setGuardEnforced("monitoring", "main", true);
  m.observeTransition("monitoring", "main", "down", "completed", 1.5);
  m.setRetainedShards(
      "monitoring", "main", 1,
      std::vector<Metrics::RetainedShardState>{{.shard = 1,
                                                .stateful_set = "prometheus-main-shard-1",
                                                .phase = "Draining",
                                                .deadline = 1795000000,
                                                .lag_seconds = 40,
                                                .draining_since = 1795000001}});
}

std::optional<std::string> findPromtool() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(start, colon - start)) / "promtool";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = colon + 1;
  }
  return std::nullopt;
}

TEST(MetricsExpositionTest, EveryFamilyIsExported) {
  Metrics m(BuildInfo{"1.2.3", "abcdef"});
  populateEveryFamily(m);
  const std::string text = m.serialize();
  for (
      const char* line : {
          R"(shardscaler_shard_ingestion_samples_per_second{namespace="monitoring",shard="0",shardset="main"} 410000)",
          R"(shardscaler_ingestion_samples_per_second{namespace="monitoring",shardset="main"} 800000.5)",
          R"(shardscaler_recommended_shards{namespace="monitoring",shardset="main"} 2)",
          R"(shardscaler_desired_shards{namespace="monitoring",shardset="main"} 2)",
          R"(shardscaler_active_shards{namespace="monitoring",shardset="main"} 2)",
          R"(shardscaler_retained_shards{namespace="monitoring",shardset="main"} 1)",
          R"(shardscaler_reconciles_total{result="success"} 1)",
          R"(shardscaler_reconciles_total{result="requeue"} 0)",
          R"(shardscaler_reconciles_total{result="error"} 1)",
          R"(shardscaler_reconcile_errors_total 1)",
          R"(shardscaler_reconcile_duration_seconds_count 2)",
          R"(shardscaler_watch_restarts_total{reason="gone",resource="statefulsets"} 1)",
          R"(shardscaler_kube_requests_total{code="409",resource="prometheuses.monitoring.coreos.com/v1",verb="PATCH"} 1)",
          R"(shardscaler_kube_requests_total{code="<error>",resource="statefulsets.apps/v1",verb="LIST"} 1)",
          R"(shardscaler_kube_request_duration_seconds_bucket{code="200",verb="GET",le="0.005"} 1)",
          R"(shardscaler_promql_queries_total 2)",
          R"(shardscaler_promql_query_errors_total{kind="timeout"} 1)",
          R"(shardscaler_promql_query_duration_seconds_count 2)",
          R"(shardscaler_workqueue_depth{name="shardsets"} 3)",
          R"(shardscaler_workqueue_adds_total{name="shardsets"} 1)",
          R"(shardscaler_workqueue_retries_total{name="shardsets"} 1)",
          R"(shardscaler_leader 1)",
          R"(shardscaler_build_info{commit="abcdef",version="1.2.3"} 1)",
          R"(shardscaler_degraded_events_total{reason="ingestion_query_failed"} 1)",
          R"(shardscaler_guard_reviews_total{operation="DELETE",result="denied"} 1)",
          R"(shardscaler_guard_reviews_total{operation="UPDATE",result="allowed"} 1)",
          R"(shardscaler_guard_reviews_total{operation="unknown",result="bad_request"} 1)",
          R"(shardscaler_guard_denials_total{namespace="monitoring",requester="service_account",rule="ActiveShard",shardset="main"} 1)",
          R"(shardscaler_shardset_condition{namespace="monitoring",reason="ShardsReady",shardset="main",status="True",type="Ready"} 1)",
          R"(shardscaler_target_paused_since_timestamp_seconds{namespace="monitoring",shardset="main",target="main",target_kind="Prometheus"} 1795000000)",
          R"(shardscaler_guard_enforced{namespace="monitoring",shardset="main"} 1)",
          R"(shardscaler_transitions_total{direction="down",namespace="monitoring",outcome="completed",shardset="main"} 1)",
          R"(shardscaler_transition_duration_seconds_count{direction="down",namespace="monitoring",shardset="main"} 1)",
          R"(shardscaler_shards{namespace="monitoring",phase="Draining",shardset="main"} 1)",
          R"(shardscaler_shards{namespace="monitoring",phase="active",shardset="main"} 1)",
          R"(shardscaler_shard_drain_lag_seconds{namespace="monitoring",shard="1",shardset="main"} 40)",
          R"(shardscaler_shard_draining_since_timestamp_seconds{namespace="monitoring",shard="1",shardset="main"} 1795000001)",
          R"(shardscaler_retained_shard_deadline_timestamp_seconds{namespace="monitoring",shard="1",shardset="main",statefulset="prometheus-main-shard-1"} 1795000000)",
          R"(shardscaler_guard_review_duration_seconds_count 3)",
      }) {
    EXPECT_THAT(text, HasSubstr(std::string(line) + "\n"));
  }
}

TEST(MetricsExpositionTest, RemoveShardSetDropsOnlyItsSeries) {
  Metrics m;
  populateEveryFamily(m);
  m.setShardCounts("other", "x", 1, 1, 0);
  m.removeShardSet("monitoring", "main");
  const std::string text = m.serialize();
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("shardset=\"main\"") == std::string::npos) continue;
    EXPECT_TRUE(line.starts_with("shardscaler_transitions_total") ||
                line.starts_with("shardscaler_transition_duration_seconds") ||
                line.starts_with("shardscaler_guard_denials_total"))
        << "a gauge of the deleted ShardSet is left: " << line;
  }
  EXPECT_THAT(text, HasSubstr(R"(shardscaler_desired_shards{namespace="other",shardset="x"} 1)"));
  // Families stay declared, and a ShardSet created again gets fresh series.
  m.setRecommendedShards("monitoring", "main", 5);
  EXPECT_THAT(
      m.serialize(),
      HasSubstr(R"(shardscaler_recommended_shards{namespace="monitoring",shardset="main"} 5)"));
}

TEST(MetricsExpositionTest, IngestionSeriesCanBeClearedOrShrunk) {
  Metrics m;
  m.setShardSamples("ns", "s", 0, 1);
  m.setShardSamples("ns", "s", 1, 2);
  m.setTotalSamples("ns", "s", 3);
  m.setRecommendedShards("ns", "s", 2);
  m.setShardCounts("ns", "s", 1, 1, 1);
  m.removeShardSamples("ns", "s", 1);
  std::string text = m.serialize();
  EXPECT_THAT(text, HasSubstr(R"(shard="0")"));
  EXPECT_THAT(text, Not(HasSubstr(R"(shard="1")")));
  m.clearIngestion("ns", "s");
  text = m.serialize();
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_shard_ingestion_samples_per_second{")));
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_ingestion_samples_per_second{")));
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_recommended_shards{")));
  EXPECT_THAT(text, HasSubstr(R"(shardscaler_retained_shards{namespace="ns",shardset="s"} 1)"));
}

TEST(MetricsExpositionTest, ConcurrentUpdatesRemovalsAndScrapes) {
  Metrics m;
  constexpr int kRounds = 300;
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string name = "s" + std::to_string(i % 5);
        m.setShardSamples("ns", name, t, i);
        m.setShardCounts("ns", name, t, t, t);
        m.observeKubeRequest("GET", "", 200, 0.001);
        if (i % 7 == t) m.removeShardSet("ns", name);
      }
    });
  }
  threads.emplace_back([&m] {
    for (int i = 0; i < kRounds / 3; ++i) EXPECT_FALSE(m.serialize().empty());
  });
  for (auto& th : threads) th.join();
  EXPECT_THAT(
      m.serialize(),
      HasSubstr(R"(shardscaler_kube_requests_total{code="200",resource="",verb="GET"} 900)"));
}

TEST(MetricsExpositionTest, PromtoolAcceptsTheExposition) {
  const auto promtool = findPromtool();
  if (!promtool) {
    GTEST_SKIP() << "promtool is not installed (Debian package 'prometheus'); the exposition was "
                    "not linted";
  }
  Metrics m;
  populateEveryFamily(m);
  const auto file = std::filesystem::temp_directory_path() /
                    ("shardscaler-metrics-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(file) << m.serialize();
  // promtool reads the exposition on stdin; it lints names, units, help and types.
  const std::string command = *promtool + " check metrics < " + file.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = ::pclose(pipe);
  std::filesystem::remove(file);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_EQ(output, "") << "promtool had remarks";
}

}  // namespace
}  // namespace shardscaler::telemetry
