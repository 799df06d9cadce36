// The drain's evidence read from the shards' own pods (docs/design/drain.md): what each pod's own
// /metrics say (drain_evidence.h's PodEvidence), judged by the same rules as the answers of a
// Prometheus that scrapes the shards (judgeDrain). A pod that was not read says nothing; it is
// never drained. Pure.
#pragma once

#include <chrono>
#include <map>
#include <span>
#include <string>

#include "shardscaler/ingestion/drain_evidence.h"
#include "shardscaler/ingestion/shard_pod_reader.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::ingestion {

// What `reading` (one scrape of a pod's own web port) says as drain evidence: its Prometheus was
// read (`up`) when the scrape answered; it started (prometheus_started) only when the answer is
// its Prometheus's own (prometheus_build_info beside process_start_time_seconds).
PodEvidence podEvidence(const PodReading& reading);

// Every pod of `shards` as evidence, by pod name: a pod read, one that was not (with why), one that
// never ran and has no volume that outlives it (nothing to ship), and each pod below a
// StatefulSet's spec.replicas that it does not control or that does not exist.
std::map<std::string, PodEvidence, std::less<>> podEvidenceOf(std::span<const ShardReading> shards);

// Each due shard's reading from its pods' evidence (judgeDrain), by StatefulSet name, with the
// surviving shards' reload read from their pods' prometheus_config_last_reload_success_timestamp_
// seconds. `read_at`: when the pods were read (the latest scrape: a later time reads a larger lag).
std::map<std::string, planner::DrainReading, std::less<>> readPodDrains(
    std::span<const DrainShard> due, std::span<const planner::Decision::DrainSurvivor> survivors,
    std::span<const ShardReading> shards, std::chrono::seconds max_lag);

}  // namespace shardscaler::ingestion
