// The Prometheus HTTP API client over libcurl: thread-safe, reusing connections across calls.
// It never retries a query by itself and never knows what the series it returns stand for.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "shardscaler/promql_client/client_options.h"
#include "shardscaler/promql_client/prom_query.h"

namespace shardscaler::promql {

// Counters for /metrics and for tests; every failed request increments `failures` and logs
// a warning with the URL, the query and the error.
struct ClientStats {
  uint64_t requests = 0;
  uint64_t failures = 0;
  uint64_t connections_opened = 0;  // new TCP connections; below `requests` when reused
  uint64_t bytes_received = 0;      // response bodies, after decompression
};

class PrometheusClient final : public PromQuery {
 public:
  // Fails (kind Config) when the base URL is not http(s):// or the auth options conflict.
  static Result<std::unique_ptr<PrometheusClient>> create(ClientOptions options);
  ~PrometheusClient() override;
  PrometheusClient(const PrometheusClient&) = delete;
  PrometheusClient& operator=(const PrometheusClient&) = delete;

  Result<QueryResult> query(const InstantQuery& q) override;

  ClientStats stats() const;
  const ClientOptions& options() const;

 private:
  struct State;
  explicit PrometheusClient(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace shardscaler::promql
