#include "shardscaler/planner/condition.h"

#include "shardscaler/planner/deadline.h"

namespace shardscaler::planner {

const Condition* findCondition(std::span<const Condition> conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

Condition makeCondition(std::span<const Condition> previous, std::string_view type, bool status,
                        std::string_view reason, std::string message, int64_t observed_generation,
                        std::chrono::system_clock::time_point now) {
  Condition c;
  c.type = std::string(type);
  c.status = std::string(status ? api::kConditionTrue : api::kConditionFalse);
  c.reason = std::string(reason);
  c.message = std::move(message);
  c.observed_generation = observed_generation;
  const Condition* before = findCondition(previous, type);
  if (before != nullptr && before->status == c.status && !before->last_transition_time.empty()) {
    c.last_transition_time = before->last_transition_time;
  } else {
    // metav1.Time has whole seconds on the wire.
    auto t = Timestamp::fromTimePoint(now);
    t.nanos = 0;
    c.last_transition_time = formatRfc3339Utc(t);
  }
  return c;
}

std::string_view toString(EventType type) {
  return type == EventType::Normal ? "Normal" : "Warning";
}

}  // namespace shardscaler::planner
