#include "shardscaler/api/condition.h"

#include "shardscaler/api/field_names.h"

namespace shardscaler::api {

nlohmann::json toJson(const Condition& condition) {
  return nlohmann::json{{field::kType, condition.type},
                        {field::kConditionStatus, condition.status},
                        {field::kReason, condition.reason},
                        {field::kMessage, condition.message},
                        {field::kLastTransitionTime, condition.last_transition_time},
                        {field::kObservedGeneration, condition.observed_generation}};
}

std::optional<Condition> conditionFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  const auto text = [&](std::string_view key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  Condition c;
  c.type = text(field::kType);
  if (c.type.empty()) return std::nullopt;
  c.status = text(field::kConditionStatus);
  c.reason = text(field::kReason);
  c.message = text(field::kMessage);
  c.last_transition_time = text(field::kLastTransitionTime);
  if (auto it = j.find(field::kObservedGeneration); it != j.end() && it->is_number_integer()) {
    c.observed_generation = it->get<int64_t>();
  }
  return c;
}

}  // namespace shardscaler::api
