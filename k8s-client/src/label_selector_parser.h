// The string grammar of apimachinery's labels.Parse, for LabelSelector::parse. Private to
// k8s-client; pure, and it never accepts a key or value the API server would refuse.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/label_selector.h"

namespace shardscaler::k8s::detail {

// The requirements of `text` in their written order; In/NotIn values sorted and deduplicated.
Expected<std::vector<SelectorRequirement>> parseSelectorRequirements(std::string_view text);

// Why `key` is not a label key the API server accepts, or nullopt when it is.
std::optional<std::string> invalidLabelKey(std::string_view key);
// Why `value` is not a value the API server accepts for `key`, or nullopt when it is.
std::optional<std::string> invalidLabelValue(std::string_view key, std::string_view value);

}  // namespace shardscaler::k8s::detail
