// Standard base64 (with padding) through OpenSSL: Secret data, caBundle fields, kubeconfig data.
// Strict, as Kubernetes' JSON decoding is: callers that accept line breaks strip them first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace shardscaler::k8s {

std::string base64Encode(std::string_view data);
// nullopt when `text` is not base64 (whitespace is not allowed, as in Kubernetes' JSON).
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace shardscaler::k8s
