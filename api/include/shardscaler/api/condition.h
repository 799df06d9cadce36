// A ShardSet's status condition (metav1.Condition), the condition types shardscaler writes and
// the condition's JSON codec. Values only: deciding a condition is the planner's and the status
// writer's job.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscaler::api {

// The condition types of ShardSet.status.conditions.
inline constexpr std::string_view kConditionReady = "Ready";
inline constexpr std::string_view kConditionProgressing = "Progressing";
inline constexpr std::string_view kConditionDegraded = "Degraded";
// True: the last ingestion query returned rates. Absent without spec.ingestion.
inline constexpr std::string_view kConditionIngestionAvailable = "IngestionAvailable";

// metav1.ConditionStatus, as the CRD's enum.
inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";
inline constexpr std::array<std::string_view, 3> kConditionStatuses = {
    kConditionTrue, kConditionFalse, kConditionUnknown};

struct Condition {
  std::string type;    // Ready | Progressing | Degraded | IngestionAvailable
  std::string status;  // "True" | "False" | "Unknown"
  std::string reason;  // CamelCase
  std::string message;
  std::string last_transition_time;  // RFC3339 UTC
  int64_t observed_generation = 0;

  friend bool operator==(const Condition&, const Condition&) = default;
};

nlohmann::json toJson(const Condition& condition);
// Reads one entry of status.conditions; a missing field reads as empty, and an entry without a
// type (or not an object) is nullopt: previous conditions only steer transitions.
std::optional<Condition> conditionFromJson(const nlohmann::json& j);

}  // namespace shardscaler::api
