#include "shardscaler/planner/reasons.h"

#include "shardscaler/k8s_meta/time.h"

#include <utility>
#include <vector>

namespace shardscaler::planner {

Condition makeCondition(std::span<const Condition> previous, std::string_view type,
                        std::string_view status, std::string_view reason, std::string message,
                        int64_t observed_generation, std::chrono::system_clock::time_point now) {
  std::vector<Condition> conditions;
  if (const Condition* before = k8s::findStatusCondition(previous, type)) {
    conditions.push_back(*before);
  }
  k8s::setStatusCondition(conditions, Condition{.type = std::string(type),
                                                .status = std::string(status),
                                                .reason = std::string(reason),
                                                .message = std::move(message),
                                                .last_transition_time = k8s::formatTime(now),
                                                .observed_generation = observed_generation});
  return std::move(conditions.front());
}

std::string_view toString(EventType type) {
  return type == EventType::Normal ? "Normal" : "Warning";
}

}  // namespace shardscaler::planner
