// The tests' HTTP(S) GET, on http_client.h's client: readiness probes of the servers tests start
// and queries a test waits on. For loopback test servers only: it never retries, never throws and
// never goes through a proxy.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace shardscaler::test_kit {

struct HttpGetOptions {
  std::chrono::milliseconds timeout{2000};
  // Verifies an https server against this CA file. When empty the certificate is not verified:
  // the servers tests start on 127.0.0.1 have self-signed certificates.
  std::filesystem::path ca_file{};
  std::string bearer_token{};                                       // Authorization: Bearer
  std::optional<std::pair<std::string, std::string>> basic_auth{};  // user, password
};

struct HttpGetResult {
  long status = 0;  // 0 when no response arrived
  std::string body{};
  std::string error{};  // libcurl's message when status == 0
};

// One blocking GET with a fresh handle, so concurrent callers share nothing but libcurl's
// global state (initialised once per process, before the first handle).
HttpGetResult httpGet(const std::string& url, const HttpGetOptions& options = {});

// Percent-encodes a query parameter value.
std::string urlEncode(std::string_view value);

}  // namespace shardscaler::test_kit
