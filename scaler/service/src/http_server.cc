#include "shardscaler/service/http_server.h"

#include <algorithm>
#include <future>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/serving/bounded_request.h"
#include "shardscaler/serving/connection_registry.h"
#include "shardscaler/serving/tcp_listener.h"
#include "shardscaler/telemetry/warning_limiter.h"

namespace shardscaler::service {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using serving::ConnectionPhase;

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";
constexpr auto kStopBudget = std::chrono::milliseconds(900);
constexpr std::size_t kFirstReadBytes = 1024;

}  // namespace

class HttpServer::Impl {
 public:
  class Listener;
  class Session;

  // Both out of line: they destroy listeners_, whose Listener is complete only below.
  Impl(Handlers handlers, Limits limits);
  ~Impl();

  Expected<std::uint16_t> listen(const serving::BindAddress& address, Endpoints endpoints);
  void start();
  void stop();

  void degraded(std::string_view reason, std::string_view detail);
  const Handlers& handlers() const { return handlers_; }
  const Limits& limits() const { return limits_; }
  serving::RequestLimits requestLimits() const {
    return {.max_header_bytes = limits_.max_header_bytes, .max_body_bytes = limits_.max_body_bytes};
  }

 private:
  Handlers handlers_;
  Limits limits_;
  telemetry::WarningLimiter warnings_{std::make_shared<k8s::RealClock>()};
  std::vector<std::unique_ptr<Listener>> listeners_;
  bool started_ = false;
  bool stopped_ = false;
};

// One listening socket with its own I/O thread and connections: a flood of one listener's
// clients leaves the others' threads and connection slots alone.
class HttpServer::Impl::Listener {
 public:
  Listener(Impl& server, serving::BindAddress address, Endpoints endpoints)
      : server_(server),
        address_(std::move(address)),
        endpoints_(endpoints),
        connections_(server.limits().max_connections) {}

  ~Listener() { stop(); }

  Expected<std::uint16_t> bind();
  void start();
  // Asks the thread to wind down; finish() waits for it within what is left of `deadline`.
  void beginStop();
  void finish(std::chrono::steady_clock::time_point deadline);
  void stop() {
    beginStop();
    finish(std::chrono::steady_clock::now() + kStopBudget);
  }

  const serving::BindAddress& address() const { return address_; }
  Endpoints& endpoints() { return endpoints_; }
  bool stopping() const { return stopping_; }  // I/O thread
  Impl& server() { return server_; }

 private:
  void accept();
  void admit(tcp::socket socket);
  void shutdownOnIoThread();

  Impl& server_;
  serving::BindAddress address_;
  Endpoints endpoints_;
  // Declared before the acceptor and the connections, so it is destroyed last.
  asio::io_context ioc_{1};
  std::optional<tcp::acceptor> acceptor_;
  serving::ConnectionRegistry connections_;  // I/O thread
  bool stopping_ = false;                    // I/O thread
  std::thread thread_;
  std::promise<void> finished_;
  std::future<void> finished_future_;
  bool started_ = false;
  bool stop_requested_ = false;
};

// One connection: read a request, answer it, repeat while the client keeps it alive.
class HttpServer::Impl::Session : public serving::Connection,
                                  public std::enable_shared_from_this<Session> {
 public:
  Session(Listener& listener, tcp::socket socket)
      : listener_(listener),
        server_(listener.server()),
        stream_(std::move(socket)),
        request_(server_.requestLimits()) {}

  void start() { waitForRequest(); }

  // An idle connection whose next request has arrived but is not read yet is busy already: it
  // does not give way to a new connection (it may be a client reusing its kept-alive connection).
  ConnectionPhase phase() const override {
    beast::error_code ec;
    if (phase_ == ConnectionPhase::Idle && stream_.socket().available(ec) > 0 && !ec) {
      return ConnectionPhase::Active;
    }
    return phase_;
  }
  void evict() override { close(); }
  // Called on stop: a connection is closed now, unless an answer is being written: then after
  // it.
  void shutdown() override {
    if (!writing_) close();
  }

 private:
  void waitForRequest() {
    request_.startHeader();
    if (request_.buffer().size() > 0) return readHeader();  // pipelined
    phase_ = ConnectionPhase::Idle;
    auto& buffer = request_.buffer();
    stream_.expires_after(server_.limits().idle_timeout);
    stream_.async_read_some(
        buffer.prepare(std::min(kFirstReadBytes, buffer.max_size() - buffer.size())),
        [self = shared_from_this()](beast::error_code ec, std::size_t bytes) {
          self->request_.buffer().commit(bytes);
          if (ec || self->closed_) return self->close();
          self->readHeader();
        });
  }

  void readHeader() {
    phase_ = ConnectionPhase::Active;
    stream_.expires_after(server_.limits().read_timeout);
    http::async_read_header(
        stream_, request_.buffer(), request_.parser(),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onHeader(ec); });
  }

  void onHeader(beast::error_code ec) {
    if (ec) return refuse(ec);
    if (auto refusal = request_.checkHeader()) return respondAndClose(*refusal);
    // Every endpoint takes the same (small) body, and drops it: read it so that the connection
    // can carry on.
    if (auto refusal = request_.startBody(server_.limits().max_body_bytes)) {
      return respondAndClose(*refusal);
    }
    if (request_.parser().is_done()) return answer();
    http::async_read(stream_, request_.buffer(), request_.parser(),
                     [self = shared_from_this()](beast::error_code body_ec, std::size_t) {
                       if (body_ec) return self->refuse(body_ec);
                       if (auto refusal = self->request_.finishBody())
                         return self->respondAndClose(*refusal);
                       self->answer();
                     });
  }

  void refuse(beast::error_code ec) {
    if (listener_.stopping() || closed_) return close();
    auto refusal = request_.refusalFor(ec);
    if (!refusal) return close();
    base::logEvent(base::LogLevel::Debug, "bad HTTP request",
                   {{"error", ec.message()}, {"status", refusal->status}});
    respondAndClose(*refusal);
  }

  void answer() {
    const auto& req = request_.parser().get();
    const auto& handlers = server_.handlers();
    const Endpoints endpoints = listener_.endpoints();
    response_ = {};
    response_.version(req.version());
    const bool head = req.method() == http::verb::head;
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    std::string body;
    std::string_view content_type = kTextContentType;
    http::status status = http::status::ok;
    if (req.method() != http::verb::get && !head) {
      status = http::status::method_not_allowed;
      response_.set(http::field::allow, "GET, HEAD");
      body = "method not allowed\n";
    } else if (endpoints.metrics && path == "/metrics") {
      content_type = kMetricsContentType;
      std::tie(status, body) = metricsBody();
    } else if (endpoints.probes && path == "/healthz") {
      std::tie(status, body) =
          probeBody(handlers.liveness, http::status::internal_server_error, "liveness check");
    } else if (endpoints.probes && path == "/readyz") {
      std::tie(status, body) =
          probeBody(handlers.readiness, http::status::service_unavailable, "readiness check");
    } else {
      status = http::status::not_found;
      body = "404 page not found\n";
    }
    response_.result(status);
    response_.set(http::field::content_type,
                  beast::string_view(content_type.data(), content_type.size()));
    response_.keep_alive(req.keep_alive() && !listener_.stopping());
    // HEAD: the headers GET would send, Content-Length included, and no body.
    response_.content_length(body.size());
    if (!head) response_.body() = std::move(body);
    write();
  }

  std::pair<http::status, std::string> metricsBody() {
    const auto& metrics = server_.handlers().metrics;
    if (!metrics) return {http::status::ok, ""};
    try {
      return {http::status::ok, metrics()};
    } catch (const std::exception& e) {
      server_.degraded("http_metrics_failed", e.what());
      return {http::status::internal_server_error, std::string("metrics: ") + e.what() + "\n"};
    }
  }

  static std::pair<http::status, std::string> probeBody(
      const std::function<Expected<void>()>& check, http::status failed, std::string_view what) {
    if (!check) return {http::status::ok, "ok"};
    try {
      auto ok = check();
      if (ok) return {http::status::ok, "ok"};
      return {failed, ok.error() + "\n"};
    } catch (const std::exception& e) {
      return {failed, std::string(what) + ": " + e.what() + "\n"};
    }
  }

  void respondAndClose(const serving::Refusal& refusal) {
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(refusal.status));
    response_.set(http::field::content_type,
                  beast::string_view(kTextContentType.data(), kTextContentType.size()));
    response_.keep_alive(false);
    response_.content_length(refusal.body.size());
    response_.body() = refusal.body;
    write();
  }

  void write() {
    phase_ = ConnectionPhase::Active;
    writing_ = true;
    stream_.expires_after(server_.limits().write_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->writing_ = false;
                        const bool keep_alive = self->response_.keep_alive();
                        self->response_ = {};
                        if (ec || !keep_alive || self->listener_.stopping() || self->closed_) {
                          return self->close();
                        }
                        self->request_.releaseIdleBuffer();
                        self->waitForRequest();
                      });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  Listener& listener_;
  Impl& server_;
  beast::tcp_stream stream_;
  serving::BoundedRequest request_;
  http::response<http::string_body> response_;
  ConnectionPhase phase_ = ConnectionPhase::Idle;
  bool writing_ = false;  // stop lets the answer being written finish
  bool closed_ = false;
};

Expected<std::uint16_t> HttpServer::Impl::Listener::bind() {
  auto acceptor = serving::openAcceptor(ioc_, address_);
  if (!acceptor) return std::unexpected(acceptor.error());
  beast::error_code ec;
  const std::uint16_t port = acceptor->local_endpoint(ec).port();
  if (ec) return std::unexpected("listen " + address_.toString() + ": " + ec.message());
  acceptor_.emplace(std::move(*acceptor));
  // Keyed by the port actually bound, so listening again on "host:<that port>" shares it.
  address_.port = port;
  return port;
}

void HttpServer::Impl::Listener::accept() {
  acceptor_->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors and the like: wait a little instead of spinning on the error.
      server_.degraded("http_accept_failed", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(ioc_, std::chrono::milliseconds(100));
      timer->async_wait([this, timer](beast::error_code wait_ec) {
        if (!wait_ec && !stopping_) accept();
      });
      return;
    }
    // The decision waits behind the completions already queued, so that a connection whose
    // request the reactor has just read counts as busy rather than idle.
    asio::post(ioc_, [this, accepted = std::move(socket)]() mutable {
      if (!stopping_) admit(std::move(accepted));
    });
    accept();
  });
}

void HttpServer::Impl::Listener::admit(tcp::socket socket) {
  beast::error_code ignored;
  switch (connections_.makeRoom()) {
    case serving::ConnectionRegistry::Admission::Refused:
      server_.degraded("http_connection_limit", "every connection is busy with a request");
      socket.close(ignored);
      return;
    case serving::ConnectionRegistry::Admission::Evicted:
      server_.degraded("http_connection_evicted",
                       "at the connection limit: the oldest idle connection was closed");
      break;
    case serving::ConnectionRegistry::Admission::Admitted:
      break;
  }
  socket.set_option(tcp::no_delay(true), ignored);
  auto session = std::make_shared<Session>(*this, std::move(socket));
  connections_.add(session);
  session->start();
}

void HttpServer::Impl::Listener::start() {
  if (started_ || stop_requested_) return;
  started_ = true;
  finished_future_ = finished_.get_future();
  accept();
  thread_ = std::thread([this] {
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      base::logEvent(base::LogLevel::Error, "HTTP server I/O thread failed",
                     {{"address", address_.toString()}, {"error", e.what()}});
    }
    finished_.set_value();
  });
}

void HttpServer::Impl::Listener::shutdownOnIoThread() {
  stopping_ = true;
  beast::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  connections_.shutdownAll();
}

void HttpServer::Impl::Listener::beginStop() {
  if (stop_requested_) return;
  stop_requested_ = true;
  if (!started_) {
    beast::error_code ignored;
    if (acceptor_) acceptor_->close(ignored);
    return;
  }
  asio::post(ioc_, [this] { shutdownOnIoThread(); });
}

void HttpServer::Impl::Listener::finish(std::chrono::steady_clock::time_point deadline) {
  if (!thread_.joinable()) return;
  // Responses being written get what is left of the budget; a client that stops reading does
  // not hold the process.
  if (finished_future_.wait_until(deadline) != std::future_status::ready) ioc_.stop();
  thread_.join();
}

Expected<std::uint16_t> HttpServer::Impl::listen(const serving::BindAddress& address,
                                                 Endpoints endpoints) {
  if (started_) return std::unexpected("listen " + address.toString() + ": server already started");
  if (address.port != 0) {
    for (auto& l : listeners_) {
      if (l->address() == address) {
        l->endpoints().metrics |= endpoints.metrics;
        l->endpoints().probes |= endpoints.probes;
        return l->address().port;
      }
    }
  }
  auto listener = std::make_unique<Listener>(*this, address, endpoints);
  auto port = listener->bind();
  if (!port) return port;
  listeners_.push_back(std::move(listener));
  return port;
}

HttpServer::Impl::Impl(Handlers handlers, Limits limits)
    : handlers_(std::move(handlers)), limits_(limits) {}

HttpServer::Impl::~Impl() { stop(); }

void HttpServer::Impl::degraded(std::string_view reason, std::string_view detail) {
  const auto decision = warnings_.admit(reason);
  if (decision.log) {
    base::logEvent(base::LogLevel::Warn, "HTTP endpoint degraded",
                   {{"reason", reason},
                    {"error", detail},
                    {"suppressed", static_cast<std::int64_t>(decision.suppressed)}});
  }
  if (handlers_.degraded) handlers_.degraded(reason);
}

void HttpServer::Impl::start() {
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& l : listeners_) l->start();
}

void HttpServer::Impl::stop() {
  if (stopped_) return;
  stopped_ = true;
  const auto deadline = std::chrono::steady_clock::now() + kStopBudget;
  for (auto& l : listeners_) l->beginStop();
  for (auto& l : listeners_) l->finish(deadline);
}

HttpServer::HttpServer(Handlers handlers) : HttpServer(std::move(handlers), Limits{}) {}

HttpServer::HttpServer(Handlers handlers, Limits limits)
    : impl_(std::make_unique<Impl>(std::move(handlers), limits)) {}

HttpServer::~HttpServer() = default;

Expected<std::uint16_t> HttpServer::listen(const serving::BindAddress& address,
                                           Endpoints endpoints) {
  return impl_->listen(address, endpoints);
}

void HttpServer::start() { impl_->start(); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace shardscaler::service
