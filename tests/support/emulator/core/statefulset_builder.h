// Builds the StatefulSet the operator wants for one shard of a target (makeStatefulSet) and the
// input hash that decides whether an existing one must be updated. Pure; it never talks to a
// server.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "target_kind.h"

namespace shardscaler::emulator {

using Json = nlohmann::json;

// Defaults of the operator v0.93 (pkg/operator/defaults.go).
inline constexpr const char* kDefaultPrometheusVersion = "v3.13.2";
inline constexpr const char* kDefaultPrometheusBaseImage = "quay.io/prometheus/prometheus";
inline constexpr const char* kDefaultConfigReloaderImage =
    "quay.io/prometheus-operator/prometheus-config-reloader:v0.93.0";
inline constexpr int kDefaultTerminationGracePeriodSeconds = 600;

// createSSetInputHash: the target's labels, annotations and generation, and the existing
// StatefulSet's spec without revisionHistoryLimit (null when there is none), as a decimal
// 64-bit FNV-1a hash of their canonical JSON.
std::string statefulSetInputHash(const Json& target, const Json& existing_spec);

// The desired StatefulSet for `shard` (metadata.namespace included). SHARD=<shard> is set on the
// config-reloader and init-config-reloader containers, as the operator does.
Json makeStatefulSet(const TargetKind& kind, const Json& target, int shard,
                     const std::string& input_hash);

}  // namespace shardscaler::emulator
