#include "shardscaler/ingestion/pod_drain.h"

#include <algorithm>
#include <vector>

namespace shardscaler::ingestion {

PodEvidence podEvidence(const PodReading& reading) {
  PodEvidence evidence;
  if (!reading.answered) {
    evidence.up = false;
    evidence.unread =
        reading.metrics ? "pod " + reading.pod.name + " was not read" : reading.metrics.error();
    return evidence;
  }
  evidence.up = true;
  if (!reading.metrics) {
    evidence.unreadable = reading.metrics.error();
    return evidence;
  }
  const PodMetrics& metrics = *reading.metrics;
  if (metrics.prometheus_build_info) evidence.prometheus_started = metrics.process_start;
  evidence.highest_appended = metrics.highest_appended;
  for (const RemoteWriteQueue& queue : metrics.queues) {
    evidence.queues.push_back({.name = queue.remote_name + " (" + queue.url + ")",
                               .samples_pending = queue.pending,
                               .highest_sent = queue.highest_sent});
  }
  return evidence;
}

std::map<std::string, PodEvidence, std::less<>> podEvidenceOf(
    std::span<const ShardReading> shards) {
  std::map<std::string, PodEvidence, std::less<>> pods;
  for (const ShardReading& shard : shards) {
    const ShardPods& sts = shard.pods;
    for (int32_t ordinal = 0; ordinal < sts.replicas; ++ordinal) {
      const std::string name = sts.stateful_set + "-" + std::to_string(ordinal);
      const bool foreign = std::ranges::find(sts.foreign, name) != sts.foreign.end();
      pods[name].unread = !sts.problem.empty() ? sts.problem
                          : foreign ? "pod " + name + " is not controlled by StatefulSet " +
                                          sts.stateful_set + ", so it is not read"
                                    : "pod " + name + " does not exist";
    }
    for (const ShardPod& pod : sts.pods) {
      PodEvidence& evidence = pods[pod.name];
      if (pod.run == PodRun::NotStarted && !pod.terminating && !sts.keeps_volumes) {
        evidence.never_ran = true;
      } else if (pod.run == PodRun::NotStarted) {
        evidence.unread = "pod " + pod.name +
                          " never ran, and a volume of its StatefulSet (volumeClaimTemplates) may "
                          "hold what an earlier pod of its name did not ship";
      } else {
        evidence.unread = "pod " + pod.name + " does not run (" + std::string(toString(pod.run)) +
                          "), so it is not read";
      }
    }
    for (const PodReading& reading : shard.readings) pods[reading.pod.name] = podEvidence(reading);
  }
  return pods;
}

std::map<std::string, planner::DrainReading, std::less<>> readPodDrains(
    std::span<const DrainShard> due, std::span<const planner::Decision::DrainSurvivor> survivors,
    std::span<const ShardReading> shards, std::chrono::seconds max_lag) {
  double read_at = 0;
  std::map<std::string, double, std::less<>> reloads;
  for (const ShardReading& shard : shards) {
    for (const PodReading& reading : shard.readings) {
      read_at =
          std::max(read_at, std::chrono::duration<double>(reading.at.time_since_epoch()).count());
      if (reading.answered && reading.metrics && reading.metrics->last_reload) {
        reloads[reading.pod.name] = *reading.metrics->last_reload;
      }
    }
  }
  const auto reloaded_at = survivorsReloadedAt(survivors, reloads);
  const auto pods = podEvidenceOf(shards);
  std::map<std::string, planner::DrainReading, std::less<>> readings;
  for (const DrainShard& shard : due) {
    planner::DrainReading reading =
        judgeDrain(shard, pods, read_at, {.custom_condition = false, .max_lag = max_lag});
    reading.survivors_reloaded_at = reloaded_at;
    readings[shard.stateful_set] = std::move(reading);
  }
  return readings;
}

}  // namespace shardscaler::ingestion
