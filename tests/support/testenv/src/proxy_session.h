// One client connection of the API fault proxy: TLS from the client, each request either
// answered with an injected fault or forwarded over its own TLS connection to kube-apiserver,
// whose answer streams back piece by piece (watches are never buffered). Runs on the proxy's
// single I/O thread; it never changes a request it forwards.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "fault_plan.h"
#include "fault_proxy_state.h"
#include "request_info.h"

namespace shardscaler::testenv::control_plane_detail {

class ProxySession : public std::enable_shared_from_this<ProxySession> {
 public:
  ProxySession(FaultProxyState& state, boost::asio::ip::tcp::socket socket);

  void start();
  // Closes both connections at once (pending operations end with an error). I/O thread only.
  void close();

 private:
  using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  void readRequest();
  void onRequest(boost::beast::error_code ec);
  void act();
  void respond(int status, std::string body, std::optional<int> retry_after, bool keep_alive);
  void forward();
  void connectUpstream();
  void sendRequest();
  void onResponseHeader(boost::beast::error_code ec);
  void relayBody();
  void onBodyRead(boost::beast::error_code ec);
  void onBodyWritten(boost::beast::error_code ec);
  void finishExchange();
  // A reused upstream connection the API server had closed gets one fresh try; else 502.
  void upstreamFailed(const char* what, boost::beast::error_code ec);
  void cutWatch();
  // During a watch: a read on the client's connection that ends only when the client goes
  // away, so that its watch at the API server ends too instead of lingering to its timeout.
  void watchClient();

  FaultProxyState& state_;
  TlsStream client_;
  std::unique_ptr<TlsStream> upstream_;
  bool upstream_reused_ = false;  // the current request went over a kept-alive connection
  boost::beast::flat_buffer client_buffer_;
  boost::beast::flat_buffer upstream_buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  std::string method_;
  RequestInfo info_;
  FaultDecision decision_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::buffer_body>> response_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::buffer_body>>
      serializer_;
  std::shared_ptr<boost::beast::http::response<boost::beast::http::string_body>> answer_;
  std::array<char, 16384> body_buffer_{};
  std::array<char, 512> client_probe_{};
  boost::asio::steady_timer timer_;  // the latency hold, then a watch's cut
  bool closed_ = false;
};

}  // namespace shardscaler::testenv::control_plane_detail
