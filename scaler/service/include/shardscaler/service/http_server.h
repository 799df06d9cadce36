// The service's HTTP endpoints (/metrics, /healthz, /readyz) on one or two listeners, each with an
// I/O thread and a connection limit of its own, so that /metrics traffic cannot starve the probes.
// Must never crash or block the process on a bad or slow client.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/base/expected.h"
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
    std::function<Expected<void>()> readiness;
    // Alive, or the reason it is not (the body of /healthz's 500): e.g. a server thread that died.
    // Called on the I/O thread; must be quick. Unset means always alive.
    std::function<Expected<void>()> liveness;
    // Told of each degraded path (accept failure, connection limit, failing metrics handler)
    // with a reason such as "http_accept_failed", "http_connection_evicted"; e.g.
    // Metrics::incDegraded. The warnings are logged at most a few per reason and ten seconds;
    // this hears of every one. Called on any listener's I/O thread: must be thread-safe.
    std::function<void(std::string_view reason)> degraded;
  };
  struct Limits {
    std::size_t max_header_bytes = 8192;  // beyond: 431 and the connection is closed
    // Every endpoint is a GET: a body is read (and dropped) only up to this; beyond: 413 and the
    // connection is closed.
    std::size_t max_body_bytes = 8192;
    // Per listener. Beyond: a new connection takes the place of the oldest idle one, or is closed
    // at once when every connection is busy with a request.
    std::size_t max_connections = 64;
    // How long a connection may wait for the first byte of a request (after it was accepted, or
    // between requests).
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};
    // From the first byte of a request to its last.
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
  Expected<std::uint16_t> listen(const serving::BindAddress& address, Endpoints endpoints);

  // Starts the I/O threads, one per listener.
  void start();

  // Stops accepting, lets responses being written finish, closes every connection and joins
  // the I/O threads; returns within about one second whatever the clients do. Idempotent.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardscaler::service
