// Reading shard StatefulSets and targets the way the lag invariants do, and the evidence a failed
// lag sequence reports. Pure functions of what was recorded; nothing here talks to a server.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "shardscaler/e2e/lag_invariants.h"
#include "shardscaler/e2e/shard_history.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {

const Json& labelsOf(const Json& object);
const Json& annotationsOf(const Json& object);
std::string metadataText(const Json& object, const char* key);  // "" when absent
bool attached(const Json& sts);  // carries operator.prometheus.io/name
bool retained(const Json& sts);  // carries shardscaler.io/retained=true
bool beingDeleted(const Json& object);

struct LagEvidenceInput {
  const std::vector<Violation>& violations;
  const std::vector<HistoryEvent>& events;
  std::vector<testenv::EmulatorAction> operator_actions;
  std::filesystem::path shardscaler_log;
  std::chrono::steady_clock::time_point started;  // t=0 of the sequence
};

// The target's history and, for the StatefulSets the violations name (every one when they name
// none), their history and the operator's writes; then every action shardscaler applied.
std::string lagEvidence(const LagEvidenceInput& in);

}  // namespace shardscaler::e2e
