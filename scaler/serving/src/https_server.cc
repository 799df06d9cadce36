#include "shardscaler/serving/https_server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "https_server_impl.h"
#include "https_session.h"
#include "shardscaler/k8s_client/log.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::serving {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kStopBudget = std::chrono::milliseconds(900);
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

}  // namespace

HttpsServer::Impl::Impl(Options options)
    : options_(std::move(options)),
      workers_(options_.workers == 0 ? 1 : options_.workers),
      tls_(options_.certificates, options_.client_certificates, options_.client_trust) {
  if (!options_.clock) options_.clock = std::make_shared<k8s::RealClock>();
}

HttpsServer::Impl::~Impl() { stop(); }

void HttpsServer::Impl::degraded(std::string_view reason, std::string_view detail) const {
  k8s::log(k8s::LogLevel::Warn, "HTTPS server degraded",
           {{"reason", reason}, {"address", options_.address.toString()}, {"error", detail}});
  if (options_.degraded) options_.degraded(reason);
}

std::expected<std::uint16_t, std::string> HttpsServer::Impl::start() {
  if (started_ || stopped_) return std::unexpected("the HTTPS server was already started");
  if (!options_.certificates) return std::unexpected("the HTTPS server needs a certificate source");
  if (options_.client_certificates != ClientCertificateMode::None && !options_.client_trust) {
    return std::unexpected("verifying client certificates needs a client trust bundle");
  }
  auto acceptor = openAcceptor(ioc_, options_.address);
  if (!acceptor) return std::unexpected(acceptor.error());
  boost::system::error_code ec;
  port_ = acceptor->local_endpoint(ec).port();
  if (ec) return std::unexpected("listen " + options_.address.toString() + ": " + ec.message());
  acceptor_.emplace(std::move(*acceptor));
  started_ = true;
  accept();
  thread_ = std::thread([this] {
    try {
      ioc_.run();
    } catch (const std::exception& e) {
      k8s::log(k8s::LogLevel::Error, "HTTPS server's I/O thread failed",
               {{"address", options_.address.toString()}, {"error", e.what()}});
    }
    finished_.set_value();
  });
  k8s::log(k8s::LogLevel::Info, "HTTPS server listening",
           {{"address", options_.address.toString()}, {"port", port_}});
  return port_;
}

void HttpsServer::Impl::accept() {
  acceptor_->async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors and the like: wait a little instead of spinning on the error.
      degraded("https_accept_failed", ec.message());
      auto timer = std::make_shared<asio::steady_timer>(ioc_, kAcceptRetryDelay);
      timer->async_wait([this, timer](const boost::system::error_code& wait_ec) {
        if (!wait_ec && !stopping_) accept();
      });
      return;
    }
    onAccept(std::move(socket));
    accept();
  });
}

void HttpsServer::Impl::onAccept(tcp::socket socket) {
  boost::system::error_code ignored;
  if (atConnectionLimit()) {
    degraded("https_connection_limit", "too many open connections");
    socket.close(ignored);
    return;
  }
  bool rebuilt = false;
  auto context = tls_.current(&rebuilt);
  if (!context) {
    // Reported when the certificate changes, not for every connection it fails.
    if (rebuilt || !options_.certificates->current()) {
      degraded("https_no_certificate", context.error());
    }
    socket.close(ignored);
    return;
  }
  if (rebuilt) {
    const auto certificate = options_.certificates->current();
    k8s::log(k8s::LogLevel::Info, "HTTPS server certificate loaded",
             {{"address", options_.address.toString()},
              {"subject", certificate->leaf().subjectCommonName()},
              {"not_after", k8s::formatTime(certificate->leaf().notAfter())}});
  }
  socket.set_option(tcp::no_delay(true), ignored);
  auto session = std::make_shared<detail::HttpsSession>(*this, std::move(socket), *context);
  sessions_.push_back(session);
  session->start();
}

bool HttpsServer::Impl::atConnectionLimit() {
  std::erase_if(sessions_, [](const auto& session) { return session.expired(); });
  return sessions_.size() >= options_.limits.max_connections;
}

void HttpsServer::Impl::shutdownOnIoThread() {
  stopping_ = true;
  boost::system::error_code ignored;
  if (acceptor_) acceptor_->close(ignored);
  for (auto& weak : sessions_) {
    if (auto session = weak.lock()) session->shutdown();
  }
}

void HttpsServer::Impl::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  auto finished = finished_.get_future();
  asio::post(ioc_, [this] { shutdownOnIoThread(); });
  // Responses being written get what is left of the budget; a client that stops reading does not
  // hold the process.
  if (finished.wait_for(kStopBudget) != std::future_status::ready) ioc_.stop();
  thread_.join();
  // Handlers still running finish here; what they post back to the stopped I/O thread is dropped.
  workers_.join();
}

HttpsServer::HttpsServer(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpsServer::~HttpsServer() = default;

void HttpsServer::handle(std::string method, std::string path, Handler handler) {
  impl_->mutableRouter().add(std::move(method), std::move(path), false, std::move(handler));
}

void HttpsServer::handlePrefix(std::string method, std::string prefix, Handler handler) {
  impl_->mutableRouter().add(std::move(method), std::move(prefix), true, std::move(handler));
}

std::expected<std::uint16_t, std::string> HttpsServer::start() { return impl_->start(); }

std::uint16_t HttpsServer::port() const { return impl_->port(); }

void HttpsServer::stop() { impl_->stop(); }

}  // namespace shardscaler::serving
