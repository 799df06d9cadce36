// When a due shard's metrics say its data is shipped (docs/design/drain.md), whatever read them:
// the answers of a Prometheus that scrapes the shards, or a pod's own /metrics. Pure: no I/O and no
// clock (the time the metrics were read at is handed in); it never reads absence as drained.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shardscaler/planner/planner.h"

namespace shardscaler::ingestion {

// One remote-write queue of a pod's Prometheus (its remote_name and url labels).
struct QueueEvidence {
  std::string name;  // "<remote_name> (<url>)", for reasons
  // prometheus_remote_storage_samples_pending.
  std::optional<double> samples_pending;
  // prometheus_remote_storage_queue_highest_sent_timestamp_seconds: absent until the queue first
  // sent something.
  std::optional<double> highest_sent;
};

// What one pod's metrics say.
struct PodEvidence {
  // Every target of the pod answered its last scrape (`up` 1 on each); nullopt: no `up` at all.
  std::optional<bool> up;
  // Why the pod's metrics were not read, when a reader of the pods' own /metrics knows (the scrape
  // failed, the pod does not run or does not exist); "" from a Prometheus's answers.
  std::string unread;
  // A reader of the pods' own status saw that no process of this pod ever ran (Pending, no
  // container ever started) and that nothing an earlier pod of its name wrote outlives that pod
  // (its StatefulSet has no volumeClaimTemplates): it holds nothing to ship.
  bool never_ran = false;
  // process_start_time_seconds of the pod's Prometheus itself (the target that exports
  // prometheus_build_info, not a config-reloader or Thanos sidecar beside it): nullopt when its
  // own metrics were not read.
  std::optional<double> prometheus_started;
  // prometheus_remote_storage_highest_timestamp_in_seconds: the newest sample it appended.
  std::optional<double> highest_appended;
  std::vector<QueueEvidence> queues;
  // A user's condition: the values of the series it answered for this pod.
  std::vector<double> condition_values;
  // Why this pod's metrics could not be read as one value a series ("" when they could): two
  // answers for one queue, a NaN. The reading fails; it is no evidence either way.
  std::string unreadable;
};

// A due shard as the planner knows it.
struct DrainShard {
  std::string stateful_set;
  int32_t replicas = 1;  // pods <stateful_set>-0 .. replicas-1
  // When it was detached (shardscaler.io/detached-at); nullopt: not known.
  std::optional<std::chrono::system_clock::time_point> detached_at;
  // The remote-write queues its configuration has (the target's spec.remoteWrite).
  int32_t remote_writes = 0;
};

struct DrainRules {
  bool custom_condition = false;  // the user's condition, else remote write caught up
  std::chrono::seconds max_lag{30};
};

// The shard is drained when every pod's own Prometheus was read and has run since before the
// detach, and then either the user's condition answers one finite series for it, or every
// configured queue is present with its lag within max_lag. A queue with samples pending lags by
// the age of the newest sample it sent (`read_at` minus its highest sent timestamp; by its whole
// run when it never sent), one with none pending by its highest appended timestamp minus its
// highest sent one, and one that never sent nor holds anything not at all. `read_at`: when the
// metrics were read (the query's evaluation time, the scrape's), in Unix seconds.
planner::DrainReading judgeDrain(const DrainShard& shard,
                                 const std::map<std::string, PodEvidence, std::less<>>& pods,
                                 double read_at, const DrainRules& rules);

// The earliest last successful configuration reload among the surviving shards' pods (each
// StatefulSet's <name>-0 .. <name>-<replicas-1>), from `reloads`, their Prometheus's
// prometheus_config_last_reload_success_timestamp_seconds by pod; nullopt when one of them has none
// (not read), or there are none.
std::optional<std::chrono::system_clock::time_point> survivorsReloadedAt(
    std::span<const planner::Decision::DrainSurvivor> survivors,
    const std::map<std::string, double, std::less<>>& reloads);

}  // namespace shardscaler::ingestion
