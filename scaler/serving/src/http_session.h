// One connection of the HTTP server, over TLS (TlsStream: handshake first) or not (PlainStream):
// for each request read its header, route it, read its body within the route's limit, have a
// worker answer it and write the answer; repeat while the client keeps the connection alive. I/O
// thread only.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "body_budget.h"
#include "bounded_request.h"
#include "http_server_impl.h"
#include "router.h"
#include "shardscaler/serving/connection_registry.h"

namespace shardscaler::serving::detail {

using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;
using PlainStream = boost::beast::tcp_stream;

template <class Stream>
class HttpSession final : public Connection,
                          public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `context` is null without TLS.
  HttpSession(HttpServerImpl& server, boost::asio::ip::tcp::socket socket,
              std::shared_ptr<boost::asio::ssl::context> context);

  void start();

  // An idle connection whose next request has arrived but is not read yet is busy already: it
  // does not give way to a new connection (it may be the API server reusing its connection).
  ConnectionPhase phase() const override;
  void evict() override { close(); }
  // On stop: a connection is closed now, unless it is being answered: then after the answer.
  void shutdown() override;

 private:
  using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
  using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

  void onHandshake(const boost::beast::error_code& ec);
  void waitForRequest();
  void onFirstBytes(const boost::beast::error_code& ec, std::size_t bytes);
  void readHeader();
  void onHeader(const boost::beast::error_code& ec);
  void answerUnrouted();
  void sendContinue();
  void readBody();
  void onBody(const boost::beast::error_code& ec);
  void refuse(const boost::beast::error_code& ec);
  // A request that does not reach its handler (413, 431, ...): reported, answered, closed.
  void refuse(Refusal refusal);
  void dispatch(HttpRequest request);
  // Writes the answer; a connection that is to be kept alive then waits for the next request.
  void answer(Response response, bool keep_alive);
  void onWritten(const boost::beast::error_code& ec);
  // With TLS, close_notify when the client can still take it (bounded); then close.
  void closeGracefully();
  void close();

  HttpServerImpl& server_;
  // Kept alive by the connection: the server may move on to a new certificate meanwhile.
  std::shared_ptr<boost::asio::ssl::context> context_;
  Stream stream_;
  std::string remote_address_;
  PeerCertificate peer_;
  BoundedRequest request_;
  Router::Match route_match_;
  BodyBudget::Reservation body_reservation_;
  boost::beast::http::response<boost::beast::http::empty_body> continue_;
  HttpResponse response_;
  std::string method_;  // of the request being answered, for the observer
  bool head_ = false;   // HEAD: the answer's headers go without its body
  std::string route_;
  k8s::Clock::MonotonicTime started_{};
  ConnectionPhase phase_ = ConnectionPhase::Handshake;
  bool answering_ = false;  // a handler runs or an answer is being written: stop waits for it
  bool closed_ = false;
};

}  // namespace shardscaler::serving::detail
