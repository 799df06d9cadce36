#include "shardscaler/service/http_server.h"

#include <future>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "shardscaler/telemetry/logging.h"

namespace shardscaler::service {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";
constexpr auto kStopBudget = std::chrono::milliseconds(900);

bool isHttpParseError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

}  // namespace

class HttpServer::Impl {
 public:
  class Session;

  struct Listener {
    serving::BindAddress address;
    Endpoints endpoints;
    tcp::acceptor acceptor;
    std::uint16_t port = 0;
  };

  Impl(Handlers handlers, Limits limits) : handlers_(std::move(handlers)), limits_(limits) {}

  ~Impl() { stop(); }

  std::expected<std::uint16_t, std::string> listen(const serving::BindAddress& address,
                                                   Endpoints endpoints);
  void start();
  void stop();

 private:
  void accept(Listener& listener);
  void shutdownOnIoThread();
  void degraded(std::string_view reason, std::string_view detail);
  bool atConnectionLimit();

  // Declared first so it is destroyed last: pending handlers own sessions whose sockets belong
  // to it.
  asio::io_context ioc_{1};
  Handlers handlers_;
  Limits limits_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::weak_ptr<Session>> sessions_;  // touched on the I/O thread only
  bool stopping_ = false;                         // I/O thread only
  std::thread thread_;
  std::promise<void> finished_;
  bool started_ = false;
  bool stopped_ = false;

  friend class Session;
};

// One connection: read a request, answer it, repeat while the client keeps it alive.
class HttpServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& server, tcp::socket socket, Endpoints endpoints)
      : server_(server), stream_(std::move(socket)), endpoints_(endpoints) {}

  void start() { readRequest(); }

  // Called on stop: an idle connection is closed now; one being answered after the write.
  void shutdown() {
    if (!writing_) close();
  }

 private:
  void readRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.limits_.max_header_bytes));
    parser_->body_limit(server_.limits_.max_body_bytes);
    stream_.expires_after(server_.limits_.read_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    if (server_.stopping_ && ec) return close();
    if (ec == http::error::header_limit) {
      return respondAndClose(http::status::request_header_fields_too_large,
                             "request header too large\n");
    }
    if (ec == http::error::body_limit) {
      return respondAndClose(http::status::payload_too_large, "request body too large\n");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == beast::error::timeout) {
      return close();
    }
    if (ec == http::error::bad_version) {
      return respondAndClose(http::status::http_version_not_supported,
                             "only HTTP/1.0 and HTTP/1.1 are served\n");
    }
    if (ec && isHttpParseError(ec)) {
      telemetry::logEvent(telemetry::LogLevel::Debug, "bad HTTP request",
                          {{"error", ec.message()}});
      return respondAndClose(http::status::bad_request, "bad request: " + ec.message() + "\n");
    }
    if (ec) return close();
    answer(parser_->get());
  }

  void answer(const http::request<http::string_body>& req) {
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
    } else if (endpoints_.metrics && path == "/metrics") {
      content_type = kMetricsContentType;
      std::tie(status, body) = metricsBody();
    } else if (endpoints_.probes && path == "/healthz") {
      body = "ok";
    } else if (endpoints_.probes && path == "/readyz") {
      std::tie(status, body) = readinessBody();
    } else {
      status = http::status::not_found;
      body = "404 page not found\n";
    }
    response_.result(status);
    response_.set(http::field::content_type,
                  beast::string_view(content_type.data(), content_type.size()));
    response_.keep_alive(req.keep_alive() && !server_.stopping_);
    // HEAD: the headers GET would send, Content-Length included, and no body.
    response_.content_length(body.size());
    if (!head) response_.body() = std::move(body);
    write();
  }

  std::pair<http::status, std::string> metricsBody() {
    if (!server_.handlers_.metrics) return {http::status::ok, ""};
    try {
      return {http::status::ok, server_.handlers_.metrics()};
    } catch (const std::exception& e) {
      server_.degraded("http_metrics_failed", e.what());
      return {http::status::internal_server_error, std::string("metrics: ") + e.what() + "\n"};
    }
  }

  std::pair<http::status, std::string> readinessBody() {
    if (!server_.handlers_.readiness) return {http::status::ok, "ok"};
    try {
      auto ready = server_.handlers_.readiness();
      if (ready) return {http::status::ok, "ok"};
      return {http::status::service_unavailable, ready.error() + "\n"};
    } catch (const std::exception& e) {
      return {http::status::service_unavailable,
              std::string("readiness check: ") + e.what() + "\n"};
    }
  }

  void respondAndClose(http::status status, std::string body) {
    response_ = {};
    response_.version(11);
    response_.result(status);
    response_.set(http::field::content_type,
                  beast::string_view(kTextContentType.data(), kTextContentType.size()));
    response_.keep_alive(false);
    response_.content_length(body.size());
    response_.body() = std::move(body);
    write();
  }

  void write() {
    writing_ = true;
    stream_.expires_after(server_.limits_.write_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->writing_ = false;
                        if (ec || !self->response_.keep_alive() || self->server_.stopping_) {
                          return self->close();
                        }
                        self->readRequest();
                      });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  Impl& server_;
  beast::tcp_stream stream_;
  const Endpoints endpoints_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  bool writing_ = false;
};

std::expected<std::uint16_t, std::string> HttpServer::Impl::listen(
    const serving::BindAddress& address, Endpoints endpoints) {
  if (started_) return std::unexpected("listen " + address.toString() + ": server already started");
  if (address.port != 0) {
    for (auto& l : listeners_) {
      if (l->address == address) {
        l->endpoints.metrics |= endpoints.metrics;
        l->endpoints.probes |= endpoints.probes;
        return l->port;
      }
    }
  }

  std::vector<tcp::endpoint> candidates;
  if (address.host.empty()) {
    // Like Go's ":8080": every interface, IPv6 and IPv4 on one dual-stack socket where possible.
    candidates = {tcp::endpoint(asio::ip::address_v6::any(), address.port),
                  tcp::endpoint(asio::ip::address_v4::any(), address.port)};
  } else {
    beast::error_code ec;
    const auto addr = asio::ip::make_address(address.host, ec);
    if (!ec) {
      candidates = {tcp::endpoint(addr, address.port)};
    } else {
      tcp::resolver resolver(ioc_);
      auto results =
          resolver.resolve(address.host, std::to_string(address.port), tcp::resolver::passive, ec);
      if (ec) return std::unexpected("listen " + address.toString() + ": " + ec.message());
      for (const auto& r : results) candidates.push_back(r.endpoint());
    }
  }

  std::string last_error = "no address to bind";
  for (const auto& endpoint : candidates) {
    tcp::acceptor acceptor(ioc_);
    beast::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec && endpoint.address().is_v6() && address.host.empty()) {
      acceptor.set_option(asio::ip::v6_only(false), ec);
    }
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      last_error = ec.message();
      continue;
    }
    const std::uint16_t port = acceptor.local_endpoint(ec).port();
    if (ec) {
      last_error = ec.message();
      continue;
    }
    // Keyed by the port actually bound, so listening again on "host:<that port>" shares it.
    listeners_.push_back(std::make_unique<Listener>(
        Listener{serving::BindAddress{address.host, port}, endpoints, std::move(acceptor), port}));
    return port;
  }
  return std::unexpected("listen " + address.toString() + ": " + last_error);
}

bool HttpServer::Impl::atConnectionLimit() {
  std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
  return sessions_.size() >= limits_.max_connections;
}

void HttpServer::Impl::degraded(std::string_view reason, std::string_view detail) {
  telemetry::logEvent(telemetry::LogLevel::Warn, "HTTP endpoint degraded",
                      {{"reason", reason}, {"error", detail}});
  if (handlers_.degraded) handlers_.degraded(reason);
}

void HttpServer::Impl::accept(Listener& listener) {
  listener.acceptor.async_accept([this, &listener](beast::error_code ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors and the like: wait a little instead of spinning on the error.
      degraded("http_accept_failed", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(ioc_, std::chrono::milliseconds(100));
      timer->async_wait([this, &listener, timer](beast::error_code wait_ec) {
        if (!wait_ec && !stopping_) accept(listener);
      });
      return;
    }
    if (atConnectionLimit()) {
      degraded("http_connection_limit", "too many open connections");
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto session = std::make_shared<Session>(*this, std::move(socket), listener.endpoints);
      sessions_.push_back(session);
      session->start();
    }
    accept(listener);
  });
}

void HttpServer::Impl::start() {
  if (started_ || stopped_) return;
  started_ = true;
  for (auto& l : listeners_) accept(*l);
  thread_ = std::thread([this] {
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      telemetry::logEvent(telemetry::LogLevel::Error, "HTTP server I/O thread failed",
                          {{"error", e.what()}});
    }
    finished_.set_value();
  });
}

void HttpServer::Impl::shutdownOnIoThread() {
  stopping_ = true;
  for (auto& l : listeners_) {
    beast::error_code ignored;
    l->acceptor.close(ignored);
  }
  for (auto& weak : sessions_) {
    if (auto s = weak.lock()) s->shutdown();
  }
}

void HttpServer::Impl::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) {
    for (auto& l : listeners_) {
      beast::error_code ignored;
      l->acceptor.close(ignored);
    }
    return;
  }
  auto finished = finished_.get_future();
  asio::post(ioc_, [this] { shutdownOnIoThread(); });
  // Responses being written get what is left of the budget; a client that stops reading does
  // not hold the process.
  if (finished.wait_for(kStopBudget) != std::future_status::ready) ioc_.stop();
  thread_.join();
}

HttpServer::HttpServer(Handlers handlers) : HttpServer(std::move(handlers), Limits{}) {}

HttpServer::HttpServer(Handlers handlers, Limits limits)
    : impl_(std::make_unique<Impl>(std::move(handlers), limits)) {}

HttpServer::~HttpServer() = default;

std::expected<std::uint16_t, std::string> HttpServer::listen(const serving::BindAddress& address,
                                                             Endpoints endpoints) {
  return impl_->listen(address, endpoints);
}

void HttpServer::start() { impl_->start(); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace shardscaler::service
