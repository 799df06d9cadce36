#include "shardscaler/serving/http_server.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "http_server_impl.h"
#include "http_session.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::serving {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kStopBudget = std::chrono::milliseconds(900);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
// The I/O thread turns at least this often; /healthz fails when it has not for kStalledAfter.
constexpr auto kHeartbeat = std::chrono::seconds(1);
constexpr auto kStalledAfter = std::chrono::seconds(10);

// Where to try binding, best first.
Expected<std::vector<tcp::endpoint>> candidates(asio::io_context& ioc, const BindAddress& address) {
  if (address.host.empty()) {
    return std::vector<tcp::endpoint>{tcp::endpoint(asio::ip::address_v6::any(), address.port),
                                      tcp::endpoint(asio::ip::address_v4::any(), address.port)};
  }
  boost::system::error_code ec;
  const auto literal = asio::ip::make_address(address.host, ec);
  if (!ec) return std::vector<tcp::endpoint>{tcp::endpoint(literal, address.port)};
  tcp::resolver resolver(ioc);
  const auto results =
      resolver.resolve(address.host, std::to_string(address.port), tcp::resolver::passive, ec);
  if (ec) return std::unexpected(ec.message());
  std::vector<tcp::endpoint> endpoints;
  for (const auto& result : results) endpoints.push_back(result.endpoint());
  return endpoints;
}

// An acceptor bound to `address` and listening, with SO_REUSEADDR (a restarted process can bind
// again at once). `host` may be an IP literal or a name to resolve; every resolved address is
// tried in order.
Expected<tcp::acceptor> openAcceptor(asio::io_context& ioc, const BindAddress& address) {
  auto endpoints = candidates(ioc, address);
  if (!endpoints) return std::unexpected(endpoints.error());
  std::string last_error = "no address to bind";
  for (const auto& endpoint : *endpoints) {
    tcp::acceptor acceptor(ioc);
    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    // Dual stack only for the wildcard; a named v6 address means exactly that address.
    if (!ec && address.host.empty() && endpoint.address().is_v6()) {
      acceptor.set_option(asio::ip::v6_only(false), ec);
    }
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (!ec) return acceptor;
    last_error = ec.message();
  }
  return std::unexpected(last_error);
}

}  // namespace

namespace detail {

HttpServerImpl::HttpServerImpl(HttpServer::Options options)
    : options_(std::move(options)),
      body_budget_(options_.limits.max_body_bytes_in_flight),
      warnings_(options_.clock),
      workers_(options_.workers == 0 ? 1 : options_.workers),
      tls_(options_.certificates, options_.client_certificates, options_.client_trust),
      connections_(options_.limits.max_connections) {}

HttpServerImpl::~HttpServerImpl() { stop(); }

void HttpServerImpl::degraded(std::string_view what, std::string_view detail) const {
  const std::string reason = std::string(tls() ? "https_" : "http_") + std::string(what);
  const auto decision = warnings_.admit(reason);
  if (decision.log) {
    base::logEvent(base::LogLevel::Warn, "HTTP server degraded",
                   {{"reason", reason},
                    {"address", options_.address.toString()},
                    {"error", detail},
                    {"suppressed", static_cast<std::int64_t>(decision.suppressed)}});
  }
  if (options_.degraded) options_.degraded(reason);
}

Expected<void> HttpServerImpl::health() const {
  if (!started_.load()) return std::unexpected(name() + " is not serving");
  if (io_thread_ended_.load()) {
    std::lock_guard lock(death_mutex_);
    return std::unexpected(name() + "'s I/O thread has stopped" +
                           (death_.empty() ? std::string() : ": " + death_));
  }
  const auto silent = options_.clock->monotonicNow() - last_beat_.load();
  if (silent > kStalledAfter) {
    return std::unexpected(
        name() + "'s I/O thread has not turned for " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(silent).count()) + " s");
  }
  return {};
}

void HttpServerImpl::beat() {
  last_beat_.store(options_.clock->monotonicNow());
  if (stopping_) return;
  heartbeat_->expires_after(kHeartbeat);
  heartbeat_->async_wait([this](const boost::system::error_code& ec) {
    if (!ec) beat();
  });
}

Expected<std::uint16_t> HttpServerImpl::listen() {
  if (started_ || stopped_) return std::unexpected(name() + " was already started");
  if (acceptor_) return port_;
  if (options_.client_certificates != ClientCertificateMode::None) {
    if (!tls()) return std::unexpected("verifying client certificates needs a certificate source");
    if (!options_.client_trust) {
      return std::unexpected("verifying client certificates needs a client trust bundle");
    }
  }
  auto acceptor = openAcceptor(ioc_, options_.address);
  boost::system::error_code ec;
  if (acceptor) port_ = acceptor->local_endpoint(ec).port();
  if (!acceptor || ec) {
    return std::unexpected("listen " + options_.address.toString() + ": " +
                           (acceptor ? ec.message() : acceptor.error()));
  }
  acceptor_.emplace(std::move(*acceptor));
  return port_;
}

Expected<std::uint16_t> HttpServerImpl::start() {
  if (auto bound = listen(); !bound) return bound;
  heartbeat_.emplace(ioc_);
  beat();
  started_ = true;
  accept();
  thread_ = std::thread([this] {
    std::string death;
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      death = e.what();
    } catch (...) {
      death = "unknown exception";
    }
    if (!death.empty()) {
      base::logEvent(base::LogLevel::Error, "HTTP server's I/O thread failed",
                     {{"address", options_.address.toString()}, {"error", death}});
      std::lock_guard lock(death_mutex_);
      death_ = std::move(death);
    }
    io_thread_ended_.store(true);
    finished_.set_value();
  });
  base::logEvent(base::LogLevel::Info, "HTTP server listening",
                 {{"address", options_.address.toString()}, {"port", port_}, {"tls", tls()}});
  return port_;
}

void HttpServerImpl::accept() {
  acceptor_->async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors and the like: wait a little instead of spinning on the error.
      degraded("accept_failed", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(ioc_, kAcceptRetryDelay);
      timer->async_wait([this, timer](const boost::system::error_code& wait_ec) {
        if (!wait_ec && !stopping_) accept();
      });
      return;
    }
    // The decision waits behind the completions already queued, so that a connection whose
    // request the reactor has just read counts as busy rather than idle.
    asio::post(ioc_, [this, accepted = std::move(socket)]() mutable {
      if (!stopping_) onAccept(std::move(accepted));
    });
    accept();
  });
}

// A socket that is not handed to a session closes as it goes out of scope.
void HttpServerImpl::onAccept(tcp::socket socket) {
  if (!makeRoom()) return;
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (!tls())
    return admit(std::make_shared<HttpSession<PlainStream>>(*this, std::move(socket), nullptr));
  bool rebuilt = false;
  auto context = tls_.current(&rebuilt);
  if (!context) {
    // Reported when the certificate changes, not for every connection it fails.
    if (rebuilt || !options_.certificates->current()) {
      degraded("no_certificate", context.error());
    }
    return;
  }
  if (rebuilt) {
    const auto certificate = options_.certificates->current();
    base::logEvent(base::LogLevel::Info, "HTTP server certificate loaded",
                   {{"address", options_.address.toString()},
                    {"subject", certificate->leaf().subjectCommonName()},
                    {"not_after", k8s::formatTime(certificate->leaf().notAfter())}});
  }
  admit(std::make_shared<HttpSession<TlsStream>>(*this, std::move(socket), *context));
}

template <class Session>
void HttpServerImpl::admit(std::shared_ptr<Session> session) {
  connections_.add(session);
  session->start();
}

bool HttpServerImpl::makeRoom() {
  switch (connections_.makeRoom()) {
    case ConnectionRegistry::Admission::Admitted:
      return true;
    case ConnectionRegistry::Admission::Evicted:
      degraded("connection_evicted",
               "at the connection limit: the oldest idle connection was closed for a new one");
      return true;
    case ConnectionRegistry::Admission::Refused:
      degraded("connection_limit", "every connection is busy with a request");
      return false;
  }
  return false;
}

void HttpServerImpl::shutdownOnIoThread() {
  stopping_ = true;
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  if (heartbeat_) heartbeat_->cancel();
  connections_.shutdownAll();
}

void HttpServerImpl::addRoute(std::string method, std::string path, bool prefix, Handler handler,
                              const HttpServer::RouteOptions& route) {
  const std::size_t limit =
      std::min(route.max_body_bytes.value_or(SIZE_MAX), options_.limits.max_body_bytes);
  router_.add(std::move(method), std::move(path), prefix, std::move(handler), limit);
}

void HttpServerImpl::beginStop() {
  if (!started_ || finishing_.valid()) return;
  finishing_ = finished_.get_future();
  stop_deadline_ = std::chrono::steady_clock::now() + kStopBudget;
  asio::post(ioc_, [this] { shutdownOnIoThread(); });
}

void HttpServerImpl::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  beginStop();
  // Responses being written get what is left of the budget; a client that stops reading does not
  // hold the process.
  if (finishing_.wait_until(stop_deadline_) != std::future_status::ready) ioc_.stop();
  thread_.join();
  // Handlers still running finish here; what they post back to the stopped I/O thread is dropped.
  workers_.join();
}

}  // namespace detail

HttpServer::HttpServer(Options options)
    : impl_(std::make_unique<detail::HttpServerImpl>(std::move(options))) {}

HttpServer::~HttpServer() = default;

void HttpServer::handle(std::string method, std::string path, Handler handler, RouteOptions route) {
  impl_->addRoute(std::move(method), std::move(path), false, std::move(handler), route);
}

void HttpServer::handlePrefix(std::string method, std::string prefix, Handler handler,
                              RouteOptions route) {
  impl_->addRoute(std::move(method), std::move(prefix), true, std::move(handler), route);
}

Expected<void> HttpServer::health() const { return impl_->health(); }

Expected<std::uint16_t> HttpServer::listen() { return impl_->listen(); }

Expected<std::uint16_t> HttpServer::start() { return impl_->start(); }

void HttpServer::beginStop() { impl_->beginStop(); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace shardscaler::serving
