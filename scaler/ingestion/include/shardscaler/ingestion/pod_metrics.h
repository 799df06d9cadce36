// What shardscaler reads from one shard pod's own /metrics (docs/design/ingestion.md,
// docs/design/drain.md): its appended-samples counter, its start time, its configuration reload and
// its remote-write queues (the drain's evidence, pod_drain.h); and samples/s from readings over
// time, counter resets included. Pure.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/promql_client/exposition.h"

namespace shardscaler::ingestion {

inline constexpr std::string_view kProcessStartMetric = "process_start_time_seconds";
// Exported by a Prometheus itself, not by a sidecar (config-reloader, Thanos) beside it.
inline constexpr std::string_view kBuildInfoMetric = "prometheus_build_info";
inline constexpr std::string_view kLastReloadMetric =
    "prometheus_config_last_reload_success_timestamp_seconds";
// Debian's Prometheus 2.42 agent has no prometheus_agent_samples_appended_total; it counts every
// sample it appends, all of which go to its queues, here.
inline constexpr std::string_view kAgentFallbackAppendedMetric =
    "prometheus_remote_storage_samples_in_total";
inline constexpr std::string_view kPendingMetric = "prometheus_remote_storage_samples_pending";
inline constexpr std::string_view kSentTimestampMetric =
    "prometheus_remote_storage_queue_highest_sent_timestamp_seconds";
inline constexpr std::string_view kHighestTimestampMetric =
    "prometheus_remote_storage_highest_timestamp_in_seconds";

// One remote-write queue of a pod, by its remote_name and url labels.
struct RemoteWriteQueue {
  std::string remote_name;
  std::string url;
  std::optional<double> pending;       // samples pending
  std::optional<double> highest_sent;  // the newest timestamp sent; absent before the first send

  friend bool operator==(const RemoteWriteQueue&, const RemoteWriteQueue&) = default;
};

struct PodMetrics {
  std::optional<double> samples_appended;  // the kind's counter, summed over its series
  std::optional<double> process_start;     // Unix seconds
  bool prometheus_build_info = false;      // the answer is a Prometheus's own
  std::optional<double> last_reload;       // its last successful configuration reload, Unix s
  std::optional<double> highest_appended;  // the newest timestamp appended, Unix seconds
  std::vector<RemoteWriteQueue> queues;

  friend bool operator==(const PodMetrics&, const PodMetrics&) = default;
};

// Whether a pod's reading needs the samples of `name` (the scraper's filter).
bool podMetricWanted(std::string_view name);

// The reading of `samples` (one scrape of a pod). Fails, naming the metric, on a value that is
// not a finite number, a queue series given twice, or a counter below zero.
Expected<PodMetrics> readPodMetrics(std::span<const promql::ExposedSample> samples,
                                    planner::TargetKind kind);

// One reading of a pod's appended-samples counter.
struct CounterReading {
  std::chrono::system_clock::time_point at;
  double value = 0;
  std::optional<double> process_start;
};

// Samples/s over `readings` (oldest first): the increases between neighbours over the time from
// the first to the last. An increase is the difference, or the later value when the counter went
// down or the process restarted (its start time changed) in between, as PromQL's rate() takes a
// reset. nullopt with fewer than two readings or no time between the first and the last.
std::optional<double> counterRate(std::span<const CounterReading> readings);

// The readings one pod's rate is computed over: at most `span` from the newest back, at most
// `max_readings`. A reading no newer than the last is ignored.
class RateWindow {
 public:
  explicit RateWindow(std::chrono::seconds span = std::chrono::minutes(5),
                      std::size_t max_readings = 64)
      : span_(span), max_readings_(max_readings) {}
  void add(const CounterReading& reading);
  std::optional<double> rate() const;
  std::size_t size() const { return readings_.size(); }

 private:
  std::chrono::seconds span_;
  std::size_t max_readings_;
  std::deque<CounterReading> readings_;
};

}  // namespace shardscaler::ingestion
