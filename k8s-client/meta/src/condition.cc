#include "shardscaler/k8s_meta/condition.h"

#include <algorithm>
#include <utility>

namespace shardscaler::k8s {

namespace field = condition_field;

nlohmann::json toJson(const Condition& condition) {
  return nlohmann::json{{field::kType, condition.type},
                        {field::kStatus, condition.status},
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
  c.status = text(field::kStatus);
  c.reason = text(field::kReason);
  c.message = text(field::kMessage);
  c.last_transition_time = text(field::kLastTransitionTime);
  if (auto it = j.find(field::kObservedGeneration); it != j.end() && it->is_number_integer()) {
    c.observed_generation = it->get<int64_t>();
  }
  return c;
}

std::vector<Condition> conditionsFromJson(const nlohmann::json& list) {
  std::vector<Condition> out;
  if (!list.is_array()) return out;
  for (const nlohmann::json& entry : list) {
    if (auto c = conditionFromJson(entry)) out.push_back(std::move(*c));
  }
  return out;
}

const Condition* findStatusCondition(std::span<const Condition> conditions, std::string_view type) {
  auto it = std::ranges::find(conditions, type, &Condition::type);
  return it != conditions.end() ? &*it : nullptr;
}

bool isStatusConditionTrue(std::span<const Condition> conditions, std::string_view type) {
  const Condition* c = findStatusCondition(conditions, type);
  return c != nullptr && c->status == kConditionTrue;
}

bool isStatusConditionFalse(std::span<const Condition> conditions, std::string_view type) {
  const Condition* c = findStatusCondition(conditions, type);
  return c != nullptr && c->status == kConditionFalse;
}

bool setStatusCondition(std::vector<Condition>& conditions, Condition condition) {
  auto it = std::ranges::find(conditions, condition.type, &Condition::type);
  if (it == conditions.end()) {
    conditions.push_back(std::move(condition));
    return true;
  }
  if (it->status == condition.status && !it->last_transition_time.empty()) {
    condition.last_transition_time = it->last_transition_time;
  }
  if (*it == condition) return false;
  *it = std::move(condition);
  return true;
}

bool removeStatusCondition(std::vector<Condition>& conditions, std::string_view type) {
  return std::erase_if(conditions, [&](const Condition& c) { return c.type == type; }) > 0;
}

}  // namespace shardscaler::k8s
