// The names every test object defaults to, the shard StatefulSet names (the planner's own naming
// function) and the one fixed "now" of the tests. Test-only: never reads a clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "shardscaler/planner/naming.h"

namespace shardscaler::test_objects {

inline constexpr std::string_view kNamespace = "monitoring";
inline constexpr std::string_view kShardSetName = "main";
inline constexpr std::string_view kTargetName = "main";
inline constexpr std::string_view kTargetUid = "6f1c0a52-prom-main";

// The StatefulSet of shard `index`: prometheus-main, prometheus-main-shard-<i>, prom-agent-....
std::string shardName(int32_t index, planner::TargetKind kind = planner::TargetKind::Prometheus,
                      std::string_view target_name = kTargetName);

// 2026-11-22T10:00:00Z, the "now" of the planner, guard and controller tests and the benches.
std::chrono::system_clock::time_point fixedNow();

}  // namespace shardscaler::test_objects
