#include "shardscaler/app/status_endpoints.h"

#include <malloc.h>

#include <utility>

#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace {

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::size_t kWorkers = 2;

serving::Response probe(const std::function<Expected<void>()>& check, int failed,
                        std::string_view what) {
  if (!check) return serving::Response::text(200, "ok");
  try {
    if (auto ok = check(); !ok) return serving::Response::text(failed, ok.error() + "\n");
  } catch (const std::exception& e) {
    return serving::Response::text(failed, std::string(what) + ": " + e.what() + "\n");
  }
  return serving::Response::text(200, "ok");
}

}  // namespace

serving::HttpServer::Limits StatusEndpoints::defaultLimits() {
  serving::HttpServer::Limits limits;
  limits.max_header_bytes = 8192;
  limits.max_body_bytes = 8192;
  limits.max_connections = 64;
  limits.max_body_bytes_in_flight = limits.max_body_bytes * limits.max_connections;
  return limits;
}

StatusEndpoints::StatusEndpoints(Handlers handlers, serving::HttpServer::Limits limits)
    : handlers_(std::move(handlers)), limits_(limits) {}

StatusEndpoints::~StatusEndpoints() { stop(); }

Expected<std::uint16_t> StatusEndpoints::listen(const serving::BindAddress& address,
                                                Endpoints endpoints) {
  if (started_) return std::unexpected("listen " + address.toString() + ": already started");
  if (address.port != 0) {
    for (auto& l : listeners_) {
      if (l.address == address) {
        l.endpoints.metrics |= endpoints.metrics;
        l.endpoints.probes |= endpoints.probes;
        return l.address.port;
      }
    }
  }
  auto server = std::make_unique<serving::HttpServer>(serving::HttpServer::Options{
      .address = address,
      .workers = kWorkers,
      .limits = limits_,
      .degraded = handlers_.degraded,
  });
  auto port = server->listen();
  if (!port) return port;
  // Keyed by the port bound, so listening again on "host:<that port>" shares it.
  serving::BindAddress bound = address;
  bound.port = *port;
  listeners_.push_back({std::move(bound), endpoints, std::move(server)});
  return port;
}

void StatusEndpoints::addRoutes(Listener& listener) {
  if (listener.endpoints.metrics) {
    listener.server->handle("GET", "/metrics", [this](const serving::Request&) {
      serving::Response response =
          serving::Response::text(200, handlers_.metrics ? handlers_.metrics() : std::string());
      response.content_type = kMetricsContentType;
      // The render copies every series on a worker thread; glibc keeps the pages freed since in
      // that thread's arena resident until asked to give them back (bench/README.md).
      malloc_trim(0);
      return response;
    });
  }
  if (listener.endpoints.probes) {
    listener.server->handle("GET", "/healthz", [this](const serving::Request&) {
      return probe(handlers_.liveness, 500, "liveness check");
    });
    listener.server->handle("GET", "/readyz", [this](const serving::Request&) {
      return probe(handlers_.readiness, 503, "readiness check");
    });
  }
}

Expected<void> StatusEndpoints::start() {
  if (started_ || stopped_) return {};
  started_ = true;
  for (auto& l : listeners_) {
    addRoutes(l);
    if (auto port = l.server->start(); !port) return std::unexpected(port.error());
  }
  return {};
}

void StatusEndpoints::stop() {
  stopped_ = true;
  for (auto& l : listeners_) l.server->beginStop();
  for (auto& l : listeners_) l.server->stop();
}

}  // namespace shardscaler::app
