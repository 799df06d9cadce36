// The operator's own shard retention (prometheus-operator v0.92+, pkg/prometheus/server:
// processShardRetention): the deadline annotation it puts on an excess shard of a target whose
// spec.shardRetentionPolicy.whenScaled is Retain, and how it reads it back. Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscaler::emulator {

inline constexpr std::string_view kDeletionDeadlineAnnotation =
    "operator.prometheus.io/deletion-deadline";

// now + the retention: spec.shardRetentionPolicy.retain.retentionPeriod, else spec.retention,
// else 24h, as RFC 3339 UTC; "0001-01-01T00:00:00Z" (never) for a period of 0, or for a
// size-only retention (spec.retentionSize without spec.retention).
std::string retentionDeadline(const nlohmann::json& target,
                              std::chrono::system_clock::time_point now);

// The annotation's time: the zero time_point for "never"; nullopt when it does not parse.
std::optional<std::chrono::system_clock::time_point> parseDeadline(std::string_view text);

// A Prometheus duration ("1y2w3d4h5m6s7ms", "0"); nullopt when it is not one.
std::optional<std::chrono::milliseconds> parsePrometheusDuration(std::string_view text);

}  // namespace shardscaler::emulator
