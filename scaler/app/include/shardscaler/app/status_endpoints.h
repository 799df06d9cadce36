// The service's /metrics, /healthz and /readyz in plain HTTP: one serving::HttpServer per address,
// each with its own I/O thread and connection limit, so that /metrics traffic cannot starve the
// probes. Must never crash or block the process on a bad or slow client.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/serving/bind_address.h"
#include "shardscaler/serving/http_server.h"

namespace shardscaler::app {

// What one address answers; paths not enabled on it get 404.
struct Endpoints {
  bool metrics = false;  // GET /metrics
  bool probes = false;   // GET /healthz, /readyz
};

class StatusEndpoints {
 public:
  struct Handlers {
    // The body of /metrics (Prometheus text format 0.0.4); called on a worker of that address.
    std::function<std::string()> metrics;
    // Ready, or the reason it is not (the body of the 503). Must be quick. Unset means always
    // ready.
    std::function<Expected<void>()> readiness;
    // Alive, or the reason it is not (the body of /healthz's 500): e.g. a server thread that died.
    // Must be quick. Unset means always alive.
    std::function<Expected<void>()> liveness;
    // Told of each degraded path, e.g. Metrics::incDegraded
    // (serving::HttpServer::Options::degraded: "http_connection_evicted", "http_handler_failed",
    // ...). Must be thread-safe.
    std::function<void(std::string_view reason)> degraded;
  };

  // Small: every endpoint is a GET, whose body is read (and dropped) only up to max_body_bytes.
  static serving::HttpServer::Limits defaultLimits();

  explicit StatusEndpoints(Handlers handlers, serving::HttpServer::Limits limits = defaultLimits());
  ~StatusEndpoints();  // stop()
  StatusEndpoints(const StatusEndpoints&) = delete;
  StatusEndpoints& operator=(const StatusEndpoints&) = delete;

  // Binds an address and returns its port (the chosen one for port 0). Listening on an address
  // (non-zero port) already bound adds the endpoints to it, so the metrics and the probe address
  // may be the same. Call before start(). The error names the address and cause.
  Expected<std::uint16_t> listen(const serving::BindAddress& address, Endpoints endpoints);

  // Starts serving on every address bound; after stop(), does nothing.
  Expected<void> start();

  // Stops accepting, lets responses being written finish, closes every connection and joins the
  // threads; returns within about a second per address whatever the clients do. Idempotent.
  void stop();

 private:
  struct Listener {
    serving::BindAddress address;  // with the port bound
    Endpoints endpoints;
    std::unique_ptr<serving::HttpServer> server;
  };
  void addRoutes(Listener& listener);

  Handlers handlers_;
  serving::HttpServer::Limits limits_;
  std::vector<Listener> listeners_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace shardscaler::app
