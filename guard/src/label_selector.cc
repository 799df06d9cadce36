#include "label_selector.h"

#include <algorithm>

namespace shardscaler::guard::detail {

using Json = nlohmann::json;

bool selectorIsEmpty(const Json& selector) {
  if (selector.is_null()) return true;
  if (!selector.is_object()) return false;
  const auto empty = [&](const char* key) {
    return !selector.contains(key) || selector[key].is_null() || selector[key].empty();
  };
  return empty("matchLabels") && empty("matchExpressions");
}

std::expected<bool, std::string> selectorMatches(const Json& selector, const Json& labels) {
  if (selectorIsEmpty(selector)) return true;
  if (!selector.is_object()) return std::unexpected("not an object");
  const auto value = [&](const std::string& key) -> const Json* {
    if (!labels.is_object()) return nullptr;
    const auto it = labels.find(key);
    return it == labels.end() || !it->is_string() ? nullptr : &*it;
  };
  const Json match_labels = selector.value("matchLabels", Json::object());
  if (!match_labels.is_object()) return std::unexpected("matchLabels is not an object");
  for (const auto& [key, wanted] : match_labels.items()) {
    const Json* have = value(key);
    if (have == nullptr || *have != wanted) return false;
  }
  const Json expressions = selector.value("matchExpressions", Json::array());
  if (!expressions.is_array()) return std::unexpected("matchExpressions is not an array");
  for (const Json& e : expressions) {
    if (!e.is_object()) return std::unexpected("a matchExpressions entry is not an object");
    const std::string key = e.value("key", "");
    const std::string op = e.value("operator", "");
    const Json values = e.value("values", Json::array());
    const Json* have = value(key);
    const bool listed =
        have != nullptr && values.is_array() && std::ranges::find(values, *have) != values.end();
    if (op == "In") {
      if (!listed) return false;
    } else if (op == "NotIn") {
      if (listed) return false;
    } else if (op == "Exists") {
      if (have == nullptr) return false;
    } else if (op == "DoesNotExist") {
      if (have != nullptr) return false;
    } else {
      return std::unexpected("unknown operator \"" + op + "\"");
    }
  }
  return true;
}

}  // namespace shardscaler::guard::detail
