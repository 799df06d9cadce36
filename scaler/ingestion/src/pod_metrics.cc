#include "shardscaler/ingestion/pod_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "shardscaler/ingestion/ingestion_query.h"

namespace shardscaler::ingestion {
namespace {

using promql::ExposedSample;

Expected<double> finite(const ExposedSample& sample) {
  if (!std::isfinite(sample.value)) {
    return std::unexpected(sample.name + " has a value that is not a finite number");
  }
  return sample.value;
}

}  // namespace

bool podMetricWanted(std::string_view name) {
  return name == samplesAppendedMetric(planner::TargetKind::Prometheus) ||
         name == samplesAppendedMetric(planner::TargetKind::PrometheusAgent) ||
         name == kAgentFallbackAppendedMetric || name == kProcessStartMetric ||
         name == kBuildInfoMetric || name == kLastReloadMetric || name == kPendingMetric ||
         name == kSentTimestampMetric || name == kHighestTimestampMetric;
}

Expected<PodMetrics> readPodMetrics(std::span<const ExposedSample> samples,
                                    planner::TargetKind kind) {
  PodMetrics out;
  const std::string_view appended = samplesAppendedMetric(kind);
  std::optional<double> fallback;
  std::map<std::pair<std::string, std::string>, RemoteWriteQueue> queues;
  for (const ExposedSample& sample : samples) {
    const std::string_view name = sample.name;
    const bool counter = name == appended || (kind == planner::TargetKind::PrometheusAgent &&
                                              name == kAgentFallbackAppendedMetric);
    if (name == kBuildInfoMetric) {
      out.prometheus_build_info = true;
      continue;
    }
    if (!counter && name != kProcessStartMetric && name != kPendingMetric &&
        name != kSentTimestampMetric && name != kHighestTimestampMetric &&
        name != kLastReloadMetric) {
      continue;
    }
    auto value = finite(sample);
    if (!value) return std::unexpected(value.error());
    if (counter) {
      if (*value < 0) return std::unexpected(sample.name + " is below zero");
      auto& sum = name == appended ? out.samples_appended : fallback;
      sum = sum.value_or(0) + *value;
    } else if (name == kProcessStartMetric || name == kHighestTimestampMetric ||
               name == kLastReloadMetric) {
      // One series per Prometheus: a second says nothing of which is its own.
      auto& field = name == kProcessStartMetric       ? out.process_start
                    : name == kHighestTimestampMetric ? out.highest_appended
                                                      : out.last_reload;
      if (field) return std::unexpected(sample.name + " has two series, not one");
      field = *value;
    } else {
      std::pair key{std::string(sample.labels.get("remote_name")),
                    std::string(sample.labels.get("url"))};
      RemoteWriteQueue& queue = queues[key];
      queue.remote_name = key.first;
      queue.url = key.second;
      auto& field = name == kPendingMetric ? queue.pending : queue.highest_sent;
      if (field) {
        return std::unexpected(sample.name + " has two series for the queue \"" + key.first + "\"");
      }
      field = *value;
    }
  }
  if (!out.samples_appended) out.samples_appended = fallback;
  for (auto& [key, queue] : queues) out.queues.push_back(std::move(queue));
  return out;
}

std::optional<double> counterRate(std::span<const CounterReading> readings) {
  if (readings.size() < 2) return std::nullopt;
  const double seconds =
      std::chrono::duration<double>(readings.back().at - readings.front().at).count();
  if (seconds <= 0) return std::nullopt;
  double increase = 0;
  for (size_t i = 1; i < readings.size(); ++i) {
    const CounterReading& before = readings[i - 1];
    const CounterReading& after = readings[i];
    const bool restarted = before.process_start && after.process_start &&
                           *before.process_start != *after.process_start;
    increase +=
        (restarted || after.value < before.value) ? after.value : after.value - before.value;
  }
  return increase / seconds;
}

void RateWindow::add(const CounterReading& reading) {
  if (!readings_.empty() && reading.at <= readings_.back().at) return;
  readings_.push_back(reading);
  while (readings_.size() > max_readings_ ||
         (readings_.size() > 2 && readings_.back().at - readings_[1].at >= span_)) {
    readings_.pop_front();
  }
}

std::optional<double> RateWindow::rate() const {
  const std::vector<CounterReading> readings(readings_.begin(), readings_.end());
  return counterRate(readings);
}

}  // namespace shardscaler::ingestion
