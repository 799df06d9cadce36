// How to reach one Prometheus-compatible HTTP API: address, authentication, TLS and limits.
// Plain configuration: it never reads files or opens connections itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscaler::promql {

struct BasicAuth {
  std::string username{};
  std::string password{};
};

enum class HttpMethod {
  // POST with a form-encoded body, falling back to GET when the server answers 405 or 501
  // (as promtool and client_golang do): long queries do not hit URL length limits.
  PostWithGetFallback,
  Get,
};

struct ClientOptions {
  // Where the API lives, with any path prefix: "http://prometheus:9090" or
  // "https://thanos.example/prom". The client appends "/api/v1/..."; a query or a fragment
  // (which would swallow that path) is refused.
  std::string base_url{};

  // Authentication: at most one of bearer_token, bearer_token_file and basic_auth.
  std::string bearer_token{};
  // Re-read on every request, so a rotated service-account token is picked up.
  std::string bearer_token_file{};
  std::optional<BasicAuth> basic_auth{};

  // TLS: a CA bundle to verify the server with (the system store when empty), an optional
  // client certificate, and an escape hatch for tests against self-signed servers.
  std::string ca_file{};
  std::string client_cert_file{};
  std::string client_key_file{};
  bool insecure_skip_verify = false;

  // Sent with every request (e.g. "X-Scope-OrgID" for multi-tenant backends).
  std::vector<std::pair<std::string, std::string>> headers{};

  // Client-side deadline for a whole request (connect + send + full response).
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};

  HttpMethod method = HttpMethod::PostWithGetFallback;
  // The most bytes of one response body the client reads: past it, it stops reading and fails
  // with ErrorKind::ResponseTooLarge (a server, or whatever the URL names, cannot make the
  // client buffer without bound). An ingestion answer of 1000 shards' pods is below 1 MiB.
  size_t max_response_bytes = size_t{8} * 1024 * 1024;
  // Idle connections kept for reuse (one per concurrent caller is enough).
  size_t max_idle_connections = 4;
  std::string user_agent = "shardscaler-promql-client";
};

}  // namespace shardscaler::promql
