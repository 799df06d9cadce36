// The service's HTTP endpoints (/metrics, /healthz, /readyz) on one or two listeners, served by
// one I/O thread. Must never crash or block the process on a bad or slow client.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/serving/bind_address.h"

namespace shardscaler::service {

// What one listener answers; paths not enabled on it get 404.
struct Endpoints {
  bool metrics = false;  // GET /metrics
  bool probes = false;   // GET /healthz, /readyz
};

class HttpServer {
 public:
  struct Handlers {
    // The body of /metrics (Prometheus text format 0.0.4); called on the I/O thread.
    std::function<std::string()> metrics;
    // Ready, or the reason it is not (the body of the 503). Called on the I/O thread; must be
    // quick. Unset means always ready.
    std::function<std::expected<void, std::string>()> readiness;
    // Told of each degraded path (accept failure, connection limit, failing metrics handler)
    // with a reason such as "http_accept_failed", after the warning is logged; e.g.
    // Metrics::incDegraded. Called on the I/O thread.
    std::function<void(std::string_view reason)> degraded;
  };
  struct Limits {
    std::size_t max_header_bytes = 8192;  // beyond: 431 and the connection is closed
    std::size_t max_body_bytes = 8192;    // beyond: 413 and the connection is closed
    std::size_t max_connections = 128;    // beyond: new connections are closed at once
    // A connection that does not complete a request in this time is closed (idle keep-alive
    // connections included).
    std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};
    std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  };

  explicit HttpServer(Handlers handlers);
  HttpServer(Handlers handlers, Limits limits);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds a listener and returns its port (the chosen one for port 0). Listening on an address
  // (non-zero port) that a listener already has adds the endpoints to it, so the metrics and the
  // probe address may be the same. Call before start(). The error names the address and cause.
  std::expected<std::uint16_t, std::string> listen(const serving::BindAddress& address,
                                                   Endpoints endpoints);

  // Starts the I/O thread that accepts and serves on every listener.
  void start();

  // Stops accepting, lets responses being written finish, closes every connection and joins
  // the I/O thread; returns within about one second whatever the clients do. Idempotent.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardscaler::service
