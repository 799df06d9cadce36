#include "shardscaler/retention/condition.h"

#include "shardscaler/retention/deadline.h"

namespace shardscaler::retention {

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
  c.status = status ? "True" : "False";
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

nlohmann::json toJson(const Condition& condition) {
  return nlohmann::json{{"type", condition.type},
                        {"status", condition.status},
                        {"reason", condition.reason},
                        {"message", condition.message},
                        {"lastTransitionTime", condition.last_transition_time},
                        {"observedGeneration", condition.observed_generation}};
}

std::optional<Condition> conditionFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto text = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Condition c;
  c.type = text("type");
  if (c.type.empty()) return std::nullopt;
  c.status = text("status");
  c.reason = text("reason");
  c.message = text("message");
  c.last_transition_time = text("lastTransitionTime");
  if (auto it = j.find("observedGeneration"); it != j.end() && it->is_number_integer()) {
    c.observed_generation = it->get<int64_t>();
  }
  return c;
}

std::string_view toString(EventType type) {
  return type == EventType::Normal ? "Normal" : "Warning";
}

}  // namespace shardscaler::retention
