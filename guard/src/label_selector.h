// metav1.LabelSelector evaluation for the webhook status check (a namespaceSelector against a
// namespace's labels). Private to guard; pure.
#pragma once

#include <expected>
#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::guard::detail {

// Null, {} or a selector with no terms.
bool selectorIsEmpty(const nlohmann::json& selector);
// Whether `labels` (an object of strings) satisfies every term; an error for a term the API
// server would not have accepted.
std::expected<bool, std::string> selectorMatches(const nlohmann::json& selector,
                                                 const nlohmann::json& labels);

}  // namespace shardscaler::guard::detail
