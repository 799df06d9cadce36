// Standard base64 (with padding) through OpenSSL, for Secret data and caBundle fields.
// Private to the serving component.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shardscaler::serving::detail {

std::string base64Encode(std::string_view data);
// nullopt when `text` is not base64 (whitespace is not allowed, as in Kubernetes' JSON).
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace shardscaler::serving::detail
