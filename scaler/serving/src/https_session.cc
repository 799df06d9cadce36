#include "https_session.h"

#include <openssl/ssl.h>

#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>

namespace shardscaler::serving::detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kCloseNotifyBudget = std::chrono::seconds(1);

bool isHttpParseError(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

// The client went away or timed out: nothing to answer, nothing to report.
bool isConnectionEnd(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == beast::error::timeout || ec == asio::ssl::error::stream_truncated ||
         ec == asio::error::operation_aborted || ec == asio::error::eof ||
         ec == asio::error::connection_reset;
}

std::string remoteAddress(const tcp::socket& socket) {
  beast::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  const auto address = endpoint.address();
  return (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
         std::to_string(endpoint.port());
}

}  // namespace

HttpsSession::HttpsSession(HttpsServer::Impl& server, tcp::socket socket,
                           std::shared_ptr<asio::ssl::context> context)
    : server_(server),
      context_(std::move(context)),
      stream_(std::move(socket), *context_),
      remote_address_(remoteAddress(beast::get_lowest_layer(stream_).socket())) {}

void HttpsSession::start() {
  beast::get_lowest_layer(stream_).expires_after(server_.options().limits.handshake_timeout);
  stream_.async_handshake(
      asio::ssl::stream_base::server,
      [self = shared_from_this()](const beast::error_code& ec) { self->onHandshake(ec); });
}

void HttpsSession::shutdown() {
  if (!busy_) close();
}

void HttpsSession::onHandshake(const beast::error_code& ec) {
  if (ec) {
    // A client that does not trust the certificate (say, a stale caBundle) shows up here.
    if (!server_.stopping() && ec != asio::error::operation_aborted) {
      server_.degraded("https_handshake_failed", remote_address_ + ": " + ec.message());
    }
    return close();
  }
  readPeerCertificate();
  readRequest();
}

void HttpsSession::readPeerCertificate() {
  if (server_.options().client_certificates == ClientCertificateMode::None) return;
  SSL* ssl = stream_.native_handle();
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return;
  STACK_OF(X509)* chain = SSL_get0_verified_chain(ssl);
  if (chain == nullptr) return;
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    X509* x509 = sk_X509_value(chain, i);
    X509_up_ref(x509);
    peer_.chain.push_back(Certificate::adopt(x509));
  }
  if (peer_.chain.empty()) return;
  peer_.verified = true;
  peer_.subject_common_name = peer_.chain.front().subjectCommonName();
  peer_.organizations = peer_.chain.front().subjectOrganizations();
}

void HttpsSession::readRequest() {
  const auto& limits = server_.options().limits;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  parser_->body_limit(limits.max_body_bytes);
  beast::get_lowest_layer(stream_).expires_after(limits.read_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](const beast::error_code& ec, std::size_t) { self->onRead(ec); });
}

void HttpsSession::onRead(const beast::error_code& ec) {
  started_ = server_.options().clock->monotonicNow();
  method_.clear();
  route_.clear();
  if (ec && (server_.stopping() || isConnectionEnd(ec))) return close();
  if (ec == http::error::header_limit) {
    return respondAndClose(431, "request header too large\n");
  }
  if (ec == http::error::body_limit) return respondAndClose(413, "request body too large\n");
  if (ec == http::error::bad_version) {
    return respondAndClose(505, "only HTTP/1.0 and HTTP/1.1 are served\n");
  }
  if (ec && isHttpParseError(ec))
    return respondAndClose(400, "bad request: " + ec.message() + "\n");
  if (ec) return close();
  dispatch(parser_->release());
}

void HttpsSession::dispatch(HttpRequest http_request) {
  Request request;
  request.method = std::string(http_request.method_string());
  request.target = std::string(http_request.target());
  const auto query_at = request.target.find('?');
  request.path = request.target.substr(0, query_at);
  if (query_at != std::string::npos) request.query = request.target.substr(query_at + 1);
  for (const auto& field : http_request) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(http_request.body());
  request.remote_address = remote_address_;
  request.peer = peer_;
  method_ = request.method;
  const bool keep_alive = http_request.keep_alive();

  const auto match = server_.router().find(request.method, request.path);
  if (match.handler == nullptr) {
    if (match.allowed.empty())
      return answer(Response::text(404, "404 page not found\n"), keep_alive);
    Response response = Response::text(405, "method not allowed\n");
    response.headers.emplace_back("Allow", match.allowed);
    return answer(std::move(response), keep_alive);
  }
  route_ = std::string(match.route);
  busy_ = true;
  // The work guard keeps the I/O thread running until the answer is posted back to it.
  auto work = std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(
      server_.ioc().get_executor());
  asio::post(server_.workers(), [self = shared_from_this(), handler = match.handler,
                                 request = std::move(request), keep_alive, work]() mutable {
    Response response;
    try {
      response = (*handler)(request);
    } catch (const std::exception& e) {
      self->server_.degraded("https_handler_failed", request.path + ": " + e.what());
      response = Response::text(500, "internal error\n");
    } catch (...) {
      self->server_.degraded("https_handler_failed", request.path + ": unknown exception");
      response = Response::text(500, "internal error\n");
    }
    asio::post(self->server_.ioc(),
               [self, response = std::move(response), keep_alive, work]() mutable {
                 self->answer(std::move(response), keep_alive);
               });
  });
}

void HttpsSession::answer(Response response, bool keep_alive) {
  busy_ = true;
  if (closed_) {
    busy_ = false;
    return;
  }
  response_ = {};
  response_.version(11);
  response_.result(static_cast<unsigned>(response.status));
  response_.set(http::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) response_.set(name, value);
  response_.body() = std::move(response.body);
  response_.keep_alive(keep_alive && !server_.stopping());
  response_.prepare_payload();
  write();
}

void HttpsSession::respondAndClose(int status, std::string body) {
  answer(Response::text(status, std::move(body)), false);
}

void HttpsSession::write() {
  beast::get_lowest_layer(stream_).expires_after(server_.options().limits.write_timeout);
  http::async_write(stream_, response_,
                    [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                      self->onWritten(ec);
                    });
}

void HttpsSession::onWritten(const beast::error_code& ec) {
  busy_ = false;
  const auto& options = server_.options();
  if (options.observer) {
    options.observer(RequestRecord{method_, route_, static_cast<int>(response_.result_int()),
                                   options.clock->monotonicNow() - started_});
  }
  if (ec) return close();
  if (!response_.keep_alive() || server_.stopping()) return closeGracefully();
  readRequest();
}

void HttpsSession::closeGracefully() {
  if (closed_ || server_.stopping()) return close();
  beast::get_lowest_layer(stream_).expires_after(kCloseNotifyBudget);
  stream_.async_shutdown([self = shared_from_this()](const beast::error_code&) { self->close(); });
}

void HttpsSession::close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  auto& socket = beast::get_lowest_layer(stream_).socket();
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

}  // namespace shardscaler::serving::detail
