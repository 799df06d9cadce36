// The status the operator writes for a target (StatusReporter.Process + UpdateStatus): replica
// counts per shard from the StatefulSets and their pods, Available and Reconciled conditions,
// shards and the scale selector. Pure: the caller gathers the observations.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "target_kind.h"

namespace shardscaler::emulator {

using Json = nlohmann::json;

// One expected shard as observed: its StatefulSet from the informer cache (null when absent)
// and the pods it owns.
struct ShardObservation {
  int shard = 0;
  std::string statefulset_name;
  std::optional<Json> statefulset;
  std::vector<Json> pods;
};

// The last reconcile of the target: nullopt before the first one.
struct ReconcileOutcome {
  bool ok = true;
  std::string message;  // the error when !ok
};

// The JSON merge patch body {"status": {...}} for the status subresource. Conditions keep their
// lastTransitionTime from `previous_status` while their status does not change.
Json buildStatusPatch(const TargetKind& kind, const Json& target,
                      const std::vector<ShardObservation>& shards,
                      const std::optional<ReconcileOutcome>& last_reconcile,
                      std::chrono::system_clock::time_point now);

// Pod.Ready(): phase Running and condition Ready=True.
bool podReady(const Json& pod);

// RFC 3339 UTC with seconds, as metav1.Time serializes.
std::string rfc3339(std::chrono::system_clock::time_point t);

}  // namespace shardscaler::emulator
