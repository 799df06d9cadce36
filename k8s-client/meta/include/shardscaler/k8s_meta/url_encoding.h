// Percent-encoding for REST paths and query strings (RFC 3986 unreserved characters pass).
#pragma once

#include <string>
#include <string_view>

namespace shardscaler::k8s::detail {

std::string percentEncode(std::string_view text);

// Appends "key=value" to a URL, with "?" or "&" as needed; empty values are skipped.
void appendQuery(std::string& url, std::string_view key, std::string_view value);

}  // namespace shardscaler::k8s::detail
