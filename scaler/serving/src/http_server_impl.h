// The state behind HttpServer shared by its listener and its connections (http_session.cc).
// Private to the serving component. Members marked "I/O thread" are touched only there.
#pragma once

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "body_budget.h"
#include "router.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/serving/connection_registry.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/telemetry/warning_limiter.h"
#include "tls_context.h"

namespace shardscaler::serving::detail {

class HttpServerImpl {
 public:
  explicit HttpServerImpl(HttpServer::Options options);
  ~HttpServerImpl();

  Expected<std::uint16_t> listen();
  Expected<std::uint16_t> start();
  void beginStop();
  void stop();

  // Logs a warning (a few per reason and period, with the count held back) and tells
  // options().degraded of every one. The reason is `what` after "https_", or "http_" without TLS.
  void degraded(std::string_view what, std::string_view detail) const;
  Expected<void> health() const;

  const HttpServer::Options& options() const { return options_; }
  bool tls() const { return options_.certificates != nullptr; }
  boost::asio::io_context& ioc() { return ioc_; }
  boost::asio::thread_pool& workers() { return workers_; }
  const Router& router() const { return router_; }
  // A route whose body limit is the smaller of its own and Limits::max_body_bytes.
  void addRoute(std::string method, std::string path, bool prefix, Handler handler,
                const HttpServer::RouteOptions& route);
  bool stopping() const { return stopping_; }  // I/O thread
  BodyBudget& bodyBudget() { return body_budget_; }

 private:
  void accept();
  void onAccept(boost::asio::ip::tcp::socket socket);
  template <class Session>
  void admit(std::shared_ptr<Session> session);
  std::string name() const { return tls() ? "the HTTPS server" : "the HTTP server"; }
  bool makeRoom();
  void shutdownOnIoThread();
  void beat();

  HttpServer::Options options_;
  Router router_;
  BodyBudget body_budget_;
  mutable telemetry::WarningLimiter warnings_;
  // Declared before everything that holds sockets or posts into it, so it is destroyed last.
  boost::asio::io_context ioc_{1};
  boost::asio::thread_pool workers_;
  std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
  TlsContextCache tls_;                                 // I/O thread
  ConnectionRegistry connections_;                      // I/O thread
  bool stopping_ = false;                               // I/O thread
  std::optional<boost::asio::steady_timer> heartbeat_;  // I/O thread
  // The I/O thread's last turn, and why it ended when it died.
  std::atomic<k8s::Clock::MonotonicTime> last_beat_{};
  std::atomic<bool> io_thread_ended_{false};
  mutable std::mutex death_mutex_;
  std::string death_;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::promise<void> finished_;
  std::future<void> finishing_;  // from beginStop()
  std::chrono::steady_clock::time_point stop_deadline_;
  std::atomic<bool> started_{false};  // health() tells from here on
  bool stopped_ = false;
};

}  // namespace shardscaler::serving::detail
