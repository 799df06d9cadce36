// The process's one HTTP/1.1 server (Boost.Beast): over TLS (OpenSSL) for the webhook and the
// aggregated API, in plain text for /metrics and the probes. Must never block its I/O thread on a
// handler, nor crash on a bad or slow client.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/serving/bind_address.h"
#include "shardscaler/serving/http_exchange.h"

namespace shardscaler::serving {

namespace detail {
class HttpServerImpl;
}

enum class ClientCertificateMode {
  None,           // no client certificate is asked for
  VerifyIfGiven,  // asked for; one that is sent must verify, else the handshake fails
  Require,        // a verified client certificate is required
  // Asked for, never required: one that does not verify leaves the request unverified
  // (PeerCertificate::verified false) instead of failing the handshake, so that the handler can
  // answer 401 as a Kubernetes API server does (Go's tls.RequestClientCert).
  Request,
};

class HttpServer {
 public:
  struct Limits {
    // Request line and header fields; beyond: 431 and the connection is closed.
    std::size_t max_header_bytes = std::size_t{16} * 1024;
    // The most any route takes (a route may take less, RouteOptions); beyond: 413 and the
    // connection is closed. An AdmissionReview carries the object and the old object, each up to
    // etcd's 1.5 MiB.
    std::size_t max_body_bytes = std::size_t{4} * 1024 * 1024;
    // A chunked body's extensions together (beyond: 400; nothing served reads them), its trailer
    // fields together (beyond: 431), and the read buffer while it is read: a chunk-size line (with
    // its extensions) or a trailer that does not end within it gets 400.
    std::size_t max_chunk_extension_bytes = 1024;
    std::size_t max_trailer_bytes = 1024;
    std::size_t max_chunk_line_bytes = std::size_t{8} * 1024;
    // Bodies held at once, from their header until their handler answered; a request whose body
    // would pass it gets 503 (Retry-After) before a byte of its body is read. A chunked body
    // counts as twice its route's limit (its string grows by doubling).
    std::size_t max_body_bytes_in_flight = std::size_t{16} * 1024 * 1024;
    // Beyond: a new connection takes the place of the oldest idle (or still handshaking) one, or
    // is closed at once when every connection is busy with a request.
    std::size_t max_connections = 256;
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
    // How long a connection may wait for the first byte of a request, after its handshake or
    // between requests (Go clients retry a request on a connection closed while idle).
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};
    // From the first byte of a request to its last.
    std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};
    std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  };

  // What one route takes.
  struct RouteOptions {
    // Its largest body (at most Limits::max_body_bytes); unset: Limits::max_body_bytes.
    std::optional<std::size_t> max_body_bytes;
  };

  struct Options {
    BindAddress address{"", 9443};
    // Read for every new connection: a new certificate is used by the next handshake. Unset: plain
    // HTTP, without TLS.
    std::shared_ptr<const certificates::CertificateSource> certificates;
    ClientCertificateMode client_certificates = ClientCertificateMode::None;
    // The CAs client certificates must chain to; read for every new connection. Required unless
    // client_certificates is None (until it holds a bundle, no client certificate verifies).
    std::shared_ptr<const certificates::TrustBundleSlot> client_trust;
    std::size_t workers = 4;  // threads that run handlers
    Limits limits;
    // Called on the I/O thread after each response; must be cheap and thread-safe.
    RequestObserver observer;
    // Told of each degraded path after its warning is logged, with a reason such as
    // "https_handshake_failed", "https_no_certificate", "https_handler_failed",
    // "https_connection_limit", "https_connection_evicted", "https_accept_failed",
    // "https_request_refused", "https_busy" ("http_" instead of "https_" without TLS); e.g. to
    // count it in a metric. The warnings are logged at most a few per reason and ten seconds (the
    // count of those held back goes with the next); this callback hears of every one. Called on
    // the I/O thread or a worker: must be thread-safe.
    std::function<void(std::string_view reason)> degraded;
    std::shared_ptr<const k8s::Clock> clock = std::make_shared<k8s::RealClock>();
  };

  explicit HttpServer(Options options);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Registers a handler for an exact path, or for every path under a prefix. `method` is an HTTP
  // method ("POST") or "*" for any. An exact path wins over a prefix, a longer prefix over a
  // shorter one; a path registered only for other methods answers 405. HEAD is answered by a GET
  // route, with its headers and without its body. A route reads a body only once it is chosen,
  // within its own limit. Call before start().
  void handle(std::string method, std::string path, Handler handler, RouteOptions route = {});
  void handlePrefix(std::string method, std::string prefix, Handler handler,
                    RouteOptions route = {});

  // Binds the address, once, and returns the bound port (the chosen one for port 0); routes may
  // still be added. The error names the address and the cause.
  Expected<std::uint16_t> listen();
  // Binds the address unless listen() did, and starts the I/O thread and the workers; returns the
  // bound port. Connections arriving before a certificate is loaded are closed.
  Expected<std::uint16_t> start();

  // Whether the I/O thread still serves: an error when it has died (an exception escaped it) or
  // has not turned for several seconds, for /healthz. Thread-safe.
  Expected<void> health() const;

  // Stops accepting, lets responses being written finish, closes every connection within about a
  // second whatever the clients do, then waits for handlers still running (they must be bounded,
  // e.g. by their API request timeout). Idempotent.
  void stop();
  // The first half of stop(): stops accepting and starts closing, and returns at once. Servers
  // stopped together call it on each, then stop() on each, and so share one budget.
  void beginStop();

 private:
  std::unique_ptr<detail::HttpServerImpl> impl_;
};

}  // namespace shardscaler::serving
