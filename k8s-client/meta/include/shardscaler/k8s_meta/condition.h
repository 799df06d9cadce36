// metav1.Condition, its JSON codec, and the status-condition helpers of apimachinery's meta
// package (FindStatusCondition, SetStatusCondition, RemoveStatusCondition,
// IsStatusConditionTrue/False). Values only: nothing here reads a clock or the API server.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscaler::k8s {

// metav1.ConditionStatus.
inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";
inline constexpr std::array<std::string_view, 3> kConditionStatuses = {
    kConditionTrue, kConditionFalse, kConditionUnknown};

// The JSON field names of metav1.Condition.
namespace condition_field {
inline constexpr std::string_view kType = "type";
inline constexpr std::string_view kStatus = "status";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kMessage = "message";
inline constexpr std::string_view kLastTransitionTime = "lastTransitionTime";
inline constexpr std::string_view kObservedGeneration = "observedGeneration";
}  // namespace condition_field

struct Condition {
  std::string type;
  std::string status;  // kConditionTrue | kConditionFalse | kConditionUnknown
  std::string reason;  // CamelCase
  std::string message;
  std::string last_transition_time;  // metav1.Time: RFC 3339 UTC, whole seconds
  int64_t observed_generation = 0;

  friend bool operator==(const Condition&, const Condition&) = default;
};

nlohmann::json toJson(const Condition& condition);
// Reads one entry of a conditions list; a missing field reads as empty, and an entry without a
// type (or not an object) is nullopt.
std::optional<Condition> conditionFromJson(const nlohmann::json& j);
// Every readable entry of a conditions list (an absent or malformed list reads as empty).
std::vector<Condition> conditionsFromJson(const nlohmann::json& list);

// The condition of that type, if any.
const Condition* findStatusCondition(std::span<const Condition> conditions, std::string_view type);
// Whether the condition of that type is there with status True (False).
bool isStatusConditionTrue(std::span<const Condition> conditions, std::string_view type);
bool isStatusConditionFalse(std::span<const Condition> conditions, std::string_view type);

// Adds `condition`, or updates the one of its type in place. As metav1.Condition requires, the
// lastTransitionTime changes only when the status does: `condition.last_transition_time` is the
// time to record then (the caller's now), and it is kept from the existing condition otherwise.
// Returns whether anything changed.
bool setStatusCondition(std::vector<Condition>& conditions, Condition condition);
// Removes the condition of that type; returns whether there was one.
bool removeStatusCondition(std::vector<Condition>& conditions, std::string_view type);

}  // namespace shardscaler::k8s
