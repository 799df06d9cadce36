// The parts of a Prometheus or PrometheusAgent object that the planner reads, and the
// reader that fills them from the API object. Reading never guesses: bad fields are reported.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/field_error.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/resharding/scrape_objects.h"

namespace shardscaler::planner {

// The shard count the operator runs for a spec.shards as written (its shardsNumber()): absent,
// 0 or negative all run one shard.
int64_t operatorShardCount(std::optional<int64_t> written);

// A field manager of the target's spec.shards or spec.paused (metadata.managedFields), other than
// shardscaler and the operator.
struct SpecWriter {
  std::string manager;
  std::string operation;                                      // "Apply" or "Update"
  std::vector<std::string> fields;                            // "spec.shards", "spec.paused"
  std::optional<std::chrono::system_clock::time_point> time;  // its entry's last write
};

struct Target {
  TargetKind kind = TargetKind::Prometheus;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;      // metadata.generation
  bool being_deleted = false;  // metadata.deletionTimestamp set
  StringMap annotations;

  // What the operator last reported in status: status.paused, and the oldest observedGeneration
  // among status.conditions (nullopt when it reported none).
  std::optional<bool> status_paused;
  std::optional<int64_t> status_observed_generation;

  std::optional<int64_t> shards;         // spec.shards as written (the operator reads <= 1 as 1)
  std::optional<int64_t> replicas;       // spec.replicas
  bool paused = false;                   // spec.paused
  std::optional<std::string> retention;  // spec.retention (servers only)
  std::optional<std::string> retention_size;  // spec.retentionSize (servers only)
  // The target's own shard retention policy: spec.shardRetentionPolicy, or, while shardscaler
  // holds the target at its own (retention_held), the policy saved before that.
  bool has_shard_retention_policy = false;  // spec.shardRetentionPolicy present
  std::optional<std::string> when_scaled;   // spec.shardRetentionPolicy.whenScaled
  bool has_retain = false;                  // spec.shardRetentionPolicy.retain present
  std::string retain_period;                // ...retain.retentionPeriod (may be "")
  // spec.shardRetentionPolicy as written (null: absent), and whether its whenScaled is Retain:
  // the operator keeps excess shards.
  nlohmann::json spec_shard_retention_policy;
  bool spec_retains = false;
  // spec.shardRetentionPolicy is the one shardscaler holds a claimed target at
  // (operator_retention.h) and the policy saved before it is readable: saved_shard_retention_policy
  // (null: none).
  bool retention_held = false;
  std::optional<nlohmann::json> saved_shard_retention_policy;
  std::optional<std::string> sharding_mode;  // spec.shardingStrategy.mode
  std::optional<std::string> mode;           // spec.mode (PrometheusAgent: StatefulSet, DaemonSet)
  std::vector<std::string> topology_values;  // spec.shardingStrategy.topology.values
  int32_t remote_writes = 0;                 // entries of spec.remoteWrite (not validated)
  // spec.web.tlsConfig is set: the pods' web port serves HTTPS; its clientAuthType ("" = none).
  bool web_tls = false;
  std::string web_client_auth_type;
  // Its scrape classes and what decides which scrape objects they reach (spec.resharding).
  resharding::TargetScrapeSpec scrape;

  std::vector<api::FieldError> spec_errors;
  // From metadata.managedFields when the object has them (a live read; the caches drop them).
  std::vector<SpecWriter> spec_writers;

  // The shard count the operator runs: operatorShardCount(shards), at most INT32_MAX.
  int32_t effectiveShards() const;
  // Zones when spec.shardingStrategy.mode is Topology, else nullopt.
  std::optional<size_t> topologyZones() const;
  // The operator has acknowledged the pause: spec.paused, and its status reports paused for the
  // current generation. (It reports from its cache, so this says its target view has the pause.)
  bool pauseAcknowledged() const;
  // The annotation, or nullptr.
  const std::string* annotation(std::string_view key) const;
  // Paused (spec.paused), and the pause is the ShardSet's: api::kPausedByAnnotation names it.
  bool pausedBy(std::string_view shard_set) const;
  // Not paused, but still carrying the ShardSet's api::kPausedByAnnotation (a resume that left it).
  bool stalePausedBy(std::string_view shard_set) const;
};

// `kind` is the kind the caller fetched (list items carry no kind); a `kind` field in the
// object must agree with it. Fails when the object cannot be that target at all.
std::expected<Target, api::FieldError> parseTarget(const nlohmann::json& object, TargetKind kind);

}  // namespace shardscaler::planner
