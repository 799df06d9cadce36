// One TLS connection of the HTTPS server: handshake, then read a request, have a worker answer
// it, write the answer, repeat while the client keeps the connection alive. I/O thread only.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "https_server_impl.h"

namespace shardscaler::serving::detail {

class HttpsSession : public std::enable_shared_from_this<HttpsSession> {
 public:
  HttpsSession(HttpsServer::Impl& server, boost::asio::ip::tcp::socket socket,
               std::shared_ptr<boost::asio::ssl::context> context);

  void start();
  // On stop: an idle connection is closed now, a busy one after its answer is written.
  void shutdown();

 private:
  using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
  using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

  void onHandshake(const boost::beast::error_code& ec);
  void readRequest();
  void onRead(const boost::beast::error_code& ec);
  void dispatch(HttpRequest request);
  void answer(Response response, bool keep_alive);
  void write();
  void onWritten(const boost::beast::error_code& ec);
  void respondAndClose(int status, std::string body);
  // close_notify when the client can still take it (bounded), then close.
  void closeGracefully();
  void close();
  void readPeerCertificate();

  HttpsServer::Impl& server_;
  // Kept alive by the connection: the server may move on to a new certificate meanwhile.
  std::shared_ptr<boost::asio::ssl::context> context_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  std::string remote_address_;
  PeerCertificate peer_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  HttpResponse response_;
  std::string method_;  // of the request being answered, for the observer
  std::string route_;
  k8s::Clock::MonotonicTime started_{};
  bool busy_ = false;  // a request is being answered (handler running or response being written)
  bool closed_ = false;
};

}  // namespace shardscaler::serving::detail
