#include "shardscaler/k8s_client/label_selector.h"

#include <algorithm>

#include "label_selector_parser.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::k8s {
namespace {

using Json = nlohmann::json;

bool matchesOne(const SelectorRequirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  switch (r.op) {
    case SelectorOperator::Exists:
      return has;
    case SelectorOperator::DoesNotExist:
      return !has;
    case SelectorOperator::Equals:
      return has && it->second == r.values.front();
    case SelectorOperator::NotEquals:
      return !has || it->second != r.values.front();
    case SelectorOperator::In:
      return has && std::ranges::find(r.values, it->second) != r.values.end();
    case SelectorOperator::NotIn:
      return !has || std::ranges::find(r.values, it->second) == r.values.end();
  }
  return false;
}

// An absent or null field reads as empty, as Go's unmarshalling leaves it.
const Json* field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

Expected<SelectorOperator> expressionOperator(const std::string& op) {
  if (op == "In") return SelectorOperator::In;
  if (op == "NotIn") return SelectorOperator::NotIn;
  if (op == "Exists") return SelectorOperator::Exists;
  if (op == "DoesNotExist") return SelectorOperator::DoesNotExist;
  return std::unexpected("unknown operator \"" + op + "\"");
}

Expected<SelectorRequirement> expression(const Json& e) {
  if (!e.is_object()) return std::unexpected("a matchExpressions entry is not an object");
  const Json* key = field(e, "key");
  const Json* op = field(e, "operator");
  if (key != nullptr && !key->is_string()) return std::unexpected("a key is not a string");
  if (op != nullptr && !op->is_string()) return std::unexpected("an operator is not a string");
  SelectorRequirement r;
  if (key != nullptr) r.key = key->get<std::string>();
  auto kind = expressionOperator(op != nullptr ? op->get<std::string>() : "");
  if (!kind) return std::unexpected(kind.error());
  r.op = *kind;
  if (auto why = detail::invalidLabelKey(r.key)) return std::unexpected(std::move(*why));
  if (const Json* values = field(e, "values")) {
    if (!values->is_array()) {
      return std::unexpected("the values of \"" + r.key + "\" are not a list");
    }
    for (const Json& v : *values) {
      if (!v.is_string()) return std::unexpected("a value of \"" + r.key + "\" is not a string");
      r.values.push_back(v.get<std::string>());
      if (auto why = detail::invalidLabelValue(r.key, r.values.back())) {
        return std::unexpected(std::move(*why));
      }
    }
  }
  // The rules of apimachinery's NewRequirement, which the API server applies to every selector.
  const bool set = r.op == SelectorOperator::In || r.op == SelectorOperator::NotIn;
  if (set && r.values.empty()) {
    return std::unexpected("the values of \"" + r.key + "\" (" + op->get<std::string>() +
                           ") must not be empty");
  }
  if (!set && !r.values.empty()) {
    return std::unexpected("\"" + r.key + "\" (" + op->get<std::string>() +
                           ") must have no values");
  }
  return r;
}

}  // namespace

Expected<LabelSelector> LabelSelector::parse(std::string_view text) {
  auto requirements = detail::parseSelectorRequirements(text);
  if (!requirements) return std::unexpected(requirements.error());
  LabelSelector selector;
  selector.requirements_ = std::move(*requirements);
  selector.text_ = std::string(text);
  return selector;
}

Expected<LabelSelector> LabelSelector::fromObject(const Json& selector) {
  LabelSelector out;
  if (selector.is_null()) return out;
  if (!selector.is_object()) return std::unexpected("not an object");
  if (const Json* match_labels = field(selector, "matchLabels")) {
    if (!match_labels->is_object()) return std::unexpected("matchLabels is not an object");
    for (const auto& [key, value] : match_labels->items()) {
      if (!value.is_string()) {
        return std::unexpected("matchLabels \"" + key + "\" is not a string");
      }
      if (auto why = detail::invalidLabelKey(key)) return std::unexpected(std::move(*why));
      if (auto why = detail::invalidLabelValue(key, value.get<std::string>())) {
        return std::unexpected(std::move(*why));
      }
      out.requirements_.push_back({key, SelectorOperator::Equals, {value.get<std::string>()}});
    }
  }
  if (const Json* expressions = field(selector, "matchExpressions")) {
    if (!expressions->is_array()) return std::unexpected("matchExpressions is not an array");
    for (const Json& e : *expressions) {
      auto requirement = expression(e);
      if (!requirement) return std::unexpected(requirement.error());
      out.requirements_.push_back(std::move(*requirement));
    }
  }
  return out;
}

bool LabelSelector::matches(const Labels& labels) const {
  return std::ranges::all_of(requirements_,
                             [&](const SelectorRequirement& r) { return matchesOne(r, labels); });
}

std::optional<std::string> LabelSelector::pinnedValue(std::string_view key) const {
  for (const SelectorRequirement& r : requirements_) {
    if (r.key != key) continue;
    const bool one = r.values.size() == 1;
    if ((r.op == SelectorOperator::Equals || r.op == SelectorOperator::In) && one) {
      return r.values.front();
    }
  }
  return std::nullopt;
}

Labels labelsOf(const Json& labels) {
  Labels out;
  if (!labels.is_object()) return out;
  for (const auto& [key, value] : labels.items()) {
    if (value.is_string()) out.emplace(key, value.get<std::string>());
  }
  return out;
}

}  // namespace shardscaler::k8s
