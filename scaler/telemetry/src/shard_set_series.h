// Metrics::ShardSetSeries: what /metrics shows of one ShardSet, shared by metrics.cc (the
// process-wide series and the scrape) and shard_set_series.cc (the per-ShardSet series).
#pragma once

#include <prometheus/gauge.h>
#include <prometheus/labels.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::telemetry {

// The per-shard series are prometheus-cpp gauges: they exist only for shards being ingested or
// retained. The series every ShardSet has (its counts, its shards by phase, its conditions, the
// guard and its pause) are kept here as plain values and written out at each scrape
// (stateFamilies): a prometheus-cpp gauge costs about 600 bytes of heap (its label map, twice
// over, and its hash node), and a ShardSet has a dozen such series, 7 KB each, 7 MB for 1,000.
// The phases shardscaler_shards counts, in the order its samples are written.
inline constexpr std::array<std::string_view, 4> kShardPhases = {"Deleting", "Draining", "Retained",
                                                                 "active"};

struct Metrics::ShardSetSeries {
  struct Condition {
    std::string type;
    std::string status;
    std::string reason;
  };
  struct Paused {
    std::string kind;
    std::string target;
    double since = 0;
  };
  std::map<int, prometheus::Gauge*> shard_samples;
  prometheus::Gauge* total_samples = nullptr;
  prometheus::Gauge* recommended = nullptr;
  std::map<int, prometheus::Gauge*> drain_lag;
  std::map<int, prometheus::Gauge*> draining_since;
  std::map<int, prometheus::Gauge*> deadline;
  std::optional<std::array<int, 3>> counts;  // desired, active, retained
  std::optional<std::array<int, 4>> phases;  // by kShardPhases
  std::vector<Condition> conditions;         // one per type, in the status's order
  std::optional<Paused> paused;
  std::optional<bool> guard_enforced;
};

}  // namespace shardscaler::telemetry
