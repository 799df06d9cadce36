#include "shardscaler/ingestion/drain_evidence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "shardscaler/planner/deadline.h"

namespace shardscaler::ingestion {
namespace {

std::string fixed(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0fs", seconds);
  return text;
}

// Held inside what a time_point holds (a metric's value is the pod's to choose).
std::chrono::system_clock::time_point fromUnixSeconds(double seconds) {
  constexpr double kLimit = 9e9;  // about 285 years either side of 1970
  if (std::isnan(seconds)) seconds = kLimit;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(std::clamp(seconds, -kLimit, kLimit))));
}

// What one pod says, or why it says nothing.
struct PodVerdict {
  std::string problem;  // "" when this pod is drained
  bool failed = false;  // its metrics could not be read at all
  std::optional<double> lag;
};

// A restart since the detach lost the queue's place: remote write sends only what a Prometheus
// appends after it starts, so what it held before is never sent by it again.
std::string restartProblem(const std::string& pod, const DrainShard& shard, double started) {
  if (!shard.detached_at) {
    return "the detach time of StatefulSet " + shard.stateful_set +
           " is unknown (no shardscaler.io/detached-at), so a restart of pod " + pod +
           "'s Prometheus since cannot be ruled out";
  }
  if (fromUnixSeconds(started) <= *shard.detached_at) return "";
  return "pod " + pod + "'s Prometheus started at " +
         planner::formatAnnotationTime(fromUnixSeconds(started)) +
         ", after the shard was detached at " + planner::formatAnnotationTime(*shard.detached_at) +
         ": remote write sends only what a Prometheus appends after it starts, so nothing says "
         "what the pod held before was shipped";
}

// The largest lag of the pod's queues, or why there is none.
PodVerdict queuesOf(const std::string& pod, const PodEvidence& evidence, const DrainShard& shard,
                    double read_at) {
  PodVerdict verdict;
  if (std::cmp_less(evidence.queues.size(), shard.remote_writes)) {
    verdict.problem = "pod " + pod + " has " + std::to_string(evidence.queues.size()) + " of the " +
                      std::to_string(shard.remote_writes) +
                      " remote-write queues its configuration has (spec.remoteWrite), so nothing "
                      "says the others shipped";
    return verdict;
  }
  for (const QueueEvidence& queue : evidence.queues) {
    if (!queue.samples_pending) {
      verdict.problem = "queue " + queue.name + " of pod " + pod +
                        " has no prometheus_remote_storage_samples_pending, so nothing says it "
                        "shipped";
      return verdict;
    }
    double lag = 0;
    if (*queue.samples_pending > 0) {
      // Never sent: it lags by all it holds, which may be all it appended since it started.
      lag = read_at - queue.highest_sent.value_or(*evidence.prometheus_started);
    } else if (queue.highest_sent) {
      if (!evidence.highest_appended) {
        verdict.problem = "pod " + pod +
                          " has no prometheus_remote_storage_highest_timestamp_in_seconds, so "
                          "its queues' lag cannot be told";
        return verdict;
      }
      lag = *evidence.highest_appended - *queue.highest_sent;
    }
    verdict.lag = std::max(verdict.lag.value_or(0), lag);
  }
  return verdict;
}

PodVerdict judgePod(const std::string& pod, const PodEvidence* evidence, const DrainShard& shard,
                    double read_at, const DrainRules& rules) {
  PodVerdict verdict;
  if (evidence != nullptr && evidence->never_ran) return verdict;
  if (evidence != nullptr && evidence->up != true && !evidence->unread.empty()) {
    verdict.problem = evidence->unread + ", so nothing says its data was shipped";
    return verdict;
  }
  if (evidence == nullptr || evidence->up != true) {
    verdict.problem =
        "pod " + pod + " is not scraped (up " +
        (evidence == nullptr || !evidence->up ? "missing" : "not 1 for all its targets") +
        "), so nothing says its data was shipped";
    return verdict;
  }
  if (!evidence->unreadable.empty()) {
    verdict.problem = "pod " + pod + ": " + evidence->unreadable;
    verdict.failed = true;
    return verdict;
  }
  if (!evidence->prometheus_started) {
    verdict.problem = "pod " + pod +
                      "'s Prometheus itself is not scraped (no process_start_time_seconds beside "
                      "prometheus_build_info; a sidecar's metrics say nothing of its queues), so "
                      "nothing says its data was shipped";
    return verdict;
  }
  const bool ships = shard.remote_writes > 0 || !evidence->queues.empty();
  if (ships) {
    verdict.problem = restartProblem(pod, shard, *evidence->prometheus_started);
    if (!verdict.problem.empty()) return verdict;
  }
  if (rules.custom_condition) {
    const auto& values = evidence->condition_values;
    if (values.empty()) {
      verdict.problem = "the drain condition does not hold for pod " + pod;
    } else if (values.size() != 1) {
      verdict.problem = "pod " + pod + " has " + std::to_string(values.size()) +
                        " series in the drain condition's answer, not one";
      verdict.failed = true;
    } else if (!std::isfinite(values.front())) {
      verdict.problem = "pod " + pod + " has a value that is not a finite number";
      verdict.failed = true;
    }
    return verdict;
  }
  verdict = queuesOf(pod, *evidence, shard, read_at);
  if (verdict.problem.empty() && verdict.lag &&
      *verdict.lag > static_cast<double>(rules.max_lag.count())) {
    // The lag itself is in status (lagSeconds) and the metrics: a reason that changed with every
    // reading would make a Degraded message, and an Event, out of each poll.
    verdict.problem = "pod " + pod + " lags behind in remote write by more than " +
                      fixed(static_cast<double>(rules.max_lag.count())) + " (maxLagSeconds)";
  }
  return verdict;
}

}  // namespace

planner::DrainReading judgeDrain(const DrainShard& shard,
                                 const std::map<std::string, PodEvidence, std::less<>>& pods,
                                 double read_at, const DrainRules& rules) {
  planner::DrainReading reading;
  if (shard.replicas <= 0) {
    reading.reason =
        "StatefulSet " + shard.stateful_set + " has no replicas: no pod says its data was shipped";
    return reading;
  }
  std::string problem;
  for (int32_t replica = 0; replica < shard.replicas; ++replica) {
    const std::string pod = shard.stateful_set + "-" + std::to_string(replica);
    const auto found = pods.find(pod);
    const PodVerdict verdict =
        judgePod(pod, found == pods.end() ? nullptr : &found->second, shard, read_at, rules);
    if (verdict.lag) reading.lag_seconds = std::max(reading.lag_seconds.value_or(0), *verdict.lag);
    if (verdict.problem.empty()) continue;
    if (verdict.failed) {
      reading.failed = true;
      reading.lag_seconds.reset();
      reading.reason = verdict.problem;
      return reading;
    }
    // A lagging pod keeps being measured (the largest lag is reported); anything else ends it.
    if (problem.empty()) problem = verdict.problem;
    if (!verdict.lag) {
      reading.reason = problem;
      return reading;
    }
  }
  reading.reason = problem;
  reading.drained = problem.empty();
  return reading;
}

std::optional<std::chrono::system_clock::time_point> survivorsReloadedAt(
    std::span<const planner::Decision::DrainSurvivor> survivors,
    const std::map<std::string, double, std::less<>>& reloads) {
  std::optional<std::chrono::system_clock::time_point> earliest;
  for (const auto& survivor : survivors) {
    for (int32_t replica = 0; replica < survivor.replicas; ++replica) {
      const auto reload = reloads.find(survivor.stateful_set + "-" + std::to_string(replica));
      if (reload == reloads.end() || !std::isfinite(reload->second)) return std::nullopt;
      const auto at = fromUnixSeconds(reload->second);
      earliest = earliest ? std::min(*earliest, at) : at;
    }
  }
  return earliest;
}

}  // namespace shardscaler::ingestion
