#include "shardscaler/ingestion/pod_metrics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace shardscaler::ingestion {
namespace {

using namespace std::chrono_literals;
using planner::TargetKind;
using promql::ExposedSample;
using Time = std::chrono::system_clock::time_point;

std::vector<ExposedSample> parsed(std::string_view text) {
  auto samples = promql::parseExposition(text, podMetricWanted);
  EXPECT_TRUE(samples) << samples.error();
  return samples ? *samples : std::vector<ExposedSample>{};
}

constexpr std::string_view kServer =
    "process_start_time_seconds 1.7e+09\n"
    "prometheus_remote_storage_highest_timestamp_in_seconds 1.700000100e+09\n"
    "prometheus_remote_storage_samples_pending{remote_name=\"a\",url=\"http://a\"} 0\n"
    "prometheus_remote_storage_queue_highest_sent_timestamp_seconds{remote_name=\"a\","
    "url=\"http://a\"} 1.700000098e+09\n"
    "prometheus_remote_storage_samples_pending{remote_name=\"b\",url=\"http://b\"} 12\n"
    "prometheus_remote_storage_samples_in_total 99\n"
    "prometheus_tsdb_head_samples_appended_total{type=\"float\"} 500\n"
    "prometheus_tsdb_head_samples_appended_total{type=\"histogram\"} 20\n"
    "go_goroutines 30\n";

TEST(PodMetrics, ReadsTheCounterTheStartAndEveryQueue) {
  auto metrics = readPodMetrics(parsed(kServer), TargetKind::Prometheus);
  ASSERT_TRUE(metrics) << metrics.error();
  EXPECT_EQ(metrics->samples_appended, 520);
  EXPECT_EQ(metrics->process_start, 1.7e9);
  EXPECT_EQ(metrics->highest_appended, 1.7000001e9);
  ASSERT_EQ(metrics->queues.size(), 2u);
  EXPECT_EQ(
      metrics->queues[0],
      (RemoteWriteQueue{
          .remote_name = "a", .url = "http://a", .pending = 0, .highest_sent = 1.700000098e9}));
  EXPECT_EQ(metrics->queues[1],
            (RemoteWriteQueue{.remote_name = "b", .url = "http://b", .pending = 12}));
}

TEST(PodMetrics, AnAgentCountsItsOwnCounterElseWhatItSendsToItsQueues) {
  auto old_agent = readPodMetrics(parsed(kServer), TargetKind::PrometheusAgent);
  ASSERT_TRUE(old_agent) << old_agent.error();
  EXPECT_EQ(old_agent->samples_appended, 99);
  const std::string newer =
      std::string(kServer) + "prometheus_agent_samples_appended_total{type=\"float\"} 7\n";
  auto new_agent = readPodMetrics(parsed(newer), TargetKind::PrometheusAgent);
  ASSERT_TRUE(new_agent) << new_agent.error();
  EXPECT_EQ(new_agent->samples_appended, 7);
  auto none = readPodMetrics(parsed("go_goroutines 1\n"), TargetKind::Prometheus);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->samples_appended);
  EXPECT_TRUE(none->queues.empty());
}

TEST(PodMetrics, DoubtfulValuesAreErrors) {
  EXPECT_FALSE(readPodMetrics(parsed("process_start_time_seconds NaN\n"), TargetKind::Prometheus));
  EXPECT_FALSE(readPodMetrics(parsed("prometheus_tsdb_head_samples_appended_total -1\n"),
                              TargetKind::Prometheus));
  EXPECT_FALSE(readPodMetrics(
      parsed("prometheus_remote_storage_samples_pending{remote_name=\"a\",url=\"u\"} 1\n"
             "prometheus_remote_storage_samples_pending{remote_name=\"a\",url=\"u\",x=\"y\"} 1\n"),
      TargetKind::Prometheus));
  EXPECT_FALSE(
      readPodMetrics(parsed("prometheus_remote_storage_highest_timestamp_in_seconds +Inf\n"),
                     TargetKind::Prometheus));
}

TEST(PodMetrics, ReadsWhetherTheAnswerIsAPrometheusOwnAndItsLastReload) {
  auto sidecar =
      readPodMetrics(parsed("process_start_time_seconds 1.7e+09\n"), TargetKind::Prometheus);
  ASSERT_TRUE(sidecar) << sidecar.error();
  EXPECT_FALSE(sidecar->prometheus_build_info);
  EXPECT_FALSE(sidecar->last_reload);
  auto own = readPodMetrics(
      parsed("process_start_time_seconds 1.7e+09\n"
             "prometheus_build_info{version=\"2.42.0\"} 1\n"
             "prometheus_config_last_reload_success_timestamp_seconds 1.7000002e+09\n"),
      TargetKind::Prometheus);
  ASSERT_TRUE(own) << own.error();
  EXPECT_TRUE(own->prometheus_build_info);
  EXPECT_EQ(own->last_reload, 1.7000002e9);
}

TEST(PodMetrics, ASecondSeriesOfAOnceAPrometheusValueIsAnError) {
  for (const char* name :
       {"process_start_time_seconds", "prometheus_remote_storage_highest_timestamp_in_seconds",
        "prometheus_config_last_reload_success_timestamp_seconds"}) {
    const std::string text = std::string(name) + "{a=\"1\"} 1\n" + name + "{a=\"2\"} 2\n";
    const auto read = readPodMetrics(parsed(text), TargetKind::Prometheus);
    ASSERT_FALSE(read) << name;
    EXPECT_EQ(read.error(), std::string(name) + " has two series, not one");
  }
}

Time at(int seconds) { return Time(std::chrono::seconds(1'700'000'000 + seconds)); }

TEST(CounterRate, IncreasesOverTheTimeBetweenTheFirstAndTheLastReading) {
  EXPECT_FALSE(counterRate(std::vector<CounterReading>{}));
  EXPECT_FALSE(counterRate(std::vector<CounterReading>{{at(0), 1}}));
  EXPECT_FALSE(counterRate(std::vector<CounterReading>{{at(0), 1}, {at(0), 5}}));
  const std::vector<CounterReading> steady{{at(0), 100}, {at(10), 300}, {at(20), 500}};
  EXPECT_EQ(counterRate(steady), 20);
}

TEST(CounterRate, AResetCountsTheNewValueAsTheIncrease) {
  // The counter went down: restarted in between, it appended 50 since.
  const std::vector<CounterReading> went_down{{at(0), 100}, {at(10), 300}, {at(20), 50}};
  EXPECT_EQ(counterRate(went_down), 12.5);
  // A restart that appended more than before is seen by the start time, not the value.
  const std::vector<CounterReading> restarted{{at(0), 100, 1.0}, {at(10), 400, 2.0}};
  EXPECT_EQ(counterRate(restarted), 40);
  const std::vector<CounterReading> same_process{{at(0), 100, 1.0}, {at(10), 400, 1.0}};
  EXPECT_EQ(counterRate(same_process), 30);
}

TEST(RateWindow, KeepsReadingsOverItsSpanAndIgnoresOnesOutOfOrder) {
  RateWindow window(60s, 100);
  window.add({at(0), 0});
  EXPECT_FALSE(window.rate());
  for (int s = 10; s <= 200; s += 10) window.add({at(s), s * 2.0});
  window.add({at(150), 0});  // older than the newest: ignored
  EXPECT_EQ(window.rate(), 2);
  EXPECT_LE(window.size(), 8u);
  RateWindow few(3600s, 3);
  for (int s = 0; s < 10; ++s) few.add({at(s), 0});
  EXPECT_EQ(few.size(), 3u);
}

}  // namespace
}  // namespace shardscaler::ingestion
