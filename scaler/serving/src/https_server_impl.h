// The state behind HttpsServer shared by its listener and its connections (https_session.cc).
// Private to the serving component. Members marked "I/O thread" are touched only there.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>

#include "router.h"
#include "shardscaler/serving/https_server.h"
#include "tls_context.h"

namespace shardscaler::serving {

namespace detail {
class HttpsSession;
}

class HttpsServer::Impl {
 public:
  explicit Impl(Options options);
  ~Impl();

  std::expected<std::uint16_t, std::string> start();
  void stop();

  // Logs a warning and tells options().degraded.
  void degraded(std::string_view reason, std::string_view detail) const;

  const Options& options() const { return options_; }
  boost::asio::io_context& ioc() { return ioc_; }
  boost::asio::thread_pool& workers() { return workers_; }
  const detail::Router& router() const { return router_; }
  detail::Router& mutableRouter() { return router_; }
  bool stopping() const { return stopping_; }  // I/O thread
  std::uint16_t port() const { return port_; }

 private:
  void accept();
  void onAccept(boost::asio::ip::tcp::socket socket);
  bool atConnectionLimit();
  void shutdownOnIoThread();

  Options options_;
  detail::Router router_;
  // Declared before everything that holds sockets or posts into it, so it is destroyed last.
  boost::asio::io_context ioc_{1};
  boost::asio::thread_pool workers_;
  std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
  detail::TlsContextCache tls_;                                // I/O thread
  std::vector<std::weak_ptr<detail::HttpsSession>> sessions_;  // I/O thread
  bool stopping_ = false;                                      // I/O thread
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::promise<void> finished_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace shardscaler::serving
