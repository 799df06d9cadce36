// Small blocking HTTP GETs for test fixtures (readiness probes, a query to wait on data).
// Loopback only by intent; it never retries and never throws.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace shardscaler::testenv::prometheus_detail {

struct HttpGetResult {
  long status = 0;  // 0 when no response arrived
  std::string body{};
  std::string error{};  // libcurl's message when status == 0
};

// TLS is not verified: these are self-signed test servers on 127.0.0.1.
HttpGetResult httpGet(const std::string& url, std::chrono::milliseconds timeout,
                      const std::optional<std::pair<std::string, std::string>>& basic_auth = {});

// URL-encodes a query parameter value.
std::string urlEncode(const std::string& value);

}  // namespace shardscaler::testenv::prometheus_detail
