#include "http_session.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>

#include "shardscaler/serving/bind_address.h"

namespace shardscaler::serving::detail {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kCloseNotifyBudget = std::chrono::seconds(1);
// What one read takes while waiting for a request to begin.
constexpr std::size_t kFirstReadBytes = 4096;

std::string remoteAddress(const tcp::socket& socket) {
  beast::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  return BindAddress{endpoint.address().to_string(), endpoint.port()}.toString();
}

// The client's chain, when it sent one that verified.
void readVerifiedChain(SSL* ssl, PeerCertificate* peer_certificate) {
  if (SSL_get0_peer_certificate(ssl) == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return;
  STACK_OF(X509)* chain = SSL_get0_verified_chain(ssl);
  if (chain == nullptr) return;
  for (int i = 0; i < sk_X509_num(chain); ++i) {
    X509* x509 = sk_X509_value(chain, i);
    X509_up_ref(x509);
    peer_certificate->chain.push_back(certificates::Certificate::adopt(x509));
  }
  if (peer_certificate->chain.empty()) return;
  peer_certificate->verified = true;
  peer_certificate->subject_common_name = peer_certificate->chain.front().subjectCommonName();
  peer_certificate->organizations = peer_certificate->chain.front().subjectOrganizations();
}

template <class Stream>
Stream openStream(tcp::socket socket, asio::ssl::context* context) {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    return Stream(std::move(socket), *context);
  } else {
    return Stream(std::move(socket));
  }
}

}  // namespace

template <class Stream>
HttpSession<Stream>::HttpSession(HttpServerImpl& server, tcp::socket socket,
                                 std::shared_ptr<asio::ssl::context> context)
    : server_(server),
      context_(std::move(context)),
      stream_(openStream<Stream>(std::move(socket), context_.get())),
      remote_address_(remoteAddress(beast::get_lowest_layer(stream_).socket())),
      request_(server.options().limits) {}

template <class Stream>
void HttpSession<Stream>::start() {
  if constexpr (!kTls) {
    return waitForRequest();
  } else {
    beast::get_lowest_layer(stream_).expires_after(server_.options().limits.handshake_timeout);
    stream_.async_handshake(
        asio::ssl::stream_base::server,
        [self = this->shared_from_this()](const beast::error_code& ec) { self->onHandshake(ec); });
  }
}

template <class Stream>
ConnectionPhase HttpSession<Stream>::phase() const {
  beast::error_code ec;
  if (phase_ == ConnectionPhase::Idle &&
      beast::get_lowest_layer(stream_).socket().available(ec) > 0 && !ec) {
    return ConnectionPhase::Active;
  }
  return phase_;
}

template <class Stream>
void HttpSession<Stream>::shutdown() {
  if (!answering_) close();
}

template <class Stream>
void HttpSession<Stream>::onHandshake(const beast::error_code& ec) {
  if (ec) {
    // A client that does not trust the certificate (say, a stale caBundle) shows up here.
    if (!server_.stopping() && !closed_ && ec != asio::error::operation_aborted &&
        ec != beast::error::timeout) {
      server_.degraded("handshake_failed", remote_address_ + ": " + ec.message());
    }
    return close();
  }
  if constexpr (kTls) {
    if (server_.options().client_certificates != ClientCertificateMode::None) {
      readVerifiedChain(stream_.native_handle(), &peer_);
    }
  }
  waitForRequest();
}

// Idle until the first byte of the next request: the idle timeout applies, and the connection may
// give its place to a new one.
template <class Stream>
void HttpSession<Stream>::waitForRequest() {
  if (closed_ || server_.stopping()) return close();
  request_.startHeader();
  method_.clear();
  head_ = false;
  route_.clear();
  if (request_.buffer().size() > 0) return readHeader();  // pipelined
  phase_ = ConnectionPhase::Idle;
  auto& buffer = request_.buffer();
  const std::size_t room = std::min(kFirstReadBytes, buffer.max_size() - buffer.size());
  beast::get_lowest_layer(stream_).expires_after(server_.options().limits.idle_timeout);
  stream_.async_read_some(
      buffer.prepare(room),
      [self = this->shared_from_this()](const beast::error_code& ec, std::size_t bytes) {
        self->onFirstBytes(ec, bytes);
      });
}

template <class Stream>
void HttpSession<Stream>::onFirstBytes(const beast::error_code& ec, std::size_t bytes) {
  request_.buffer().commit(bytes);
  if (ec || closed_) return close();  // closed, timed out or evicted: nothing to answer
  readHeader();
}

template <class Stream>
void HttpSession<Stream>::readHeader() {
  phase_ = ConnectionPhase::Active;
  started_ = server_.options().clock->monotonicNow();
  // One deadline for the whole request, header and body.
  beast::get_lowest_layer(stream_).expires_after(server_.options().limits.read_timeout);
  http::async_read_header(stream_, request_.buffer(), request_.parser(),
                          [self = this->shared_from_this()](const beast::error_code& ec,
                                                            std::size_t) { self->onHeader(ec); });
}

template <class Stream>
void HttpSession<Stream>::onHeader(const beast::error_code& ec) {
  if (ec) return refuse(ec);
  const auto& header = request_.parser().get();
  method_ = std::string(header.method_string());
  head_ = header.method() == http::verb::head;
  const std::string_view target(header.target().data(), header.target().size());
  route_match_ = server_.router().find(method_, target.substr(0, target.find('?')));
  if (route_match_.handler == nullptr) return answerUnrouted();
  if (auto refusal = request_.startBody(route_match_.max_body_bytes)) {
    return refuse(std::move(*refusal));
  }
  body_reservation_ = server_.bodyBudget().reserve(request_.bodyBytesToReserve());
  if (!body_reservation_) {
    server_.degraded("busy", "request bodies in flight at their limit of " +
                                 std::to_string(server_.bodyBudget().total()) + " bytes");
    Response busy = Response::text(503, "too many request bodies in flight; retry\n");
    busy.headers.emplace_back("Retry-After", "1");
    return answer(std::move(busy), false);
  }
  if (request_.expectsContinue() && !request_.parser().is_done()) return sendContinue();
  readBody();
}

// 404 or 405 without reading a body; a connection whose request announced one cannot carry on.
template <class Stream>
void HttpSession<Stream>::answerUnrouted() {
  const auto& parser = request_.parser();
  const bool announces_body = parser.chunked() || parser.content_length().value_or(0) > 0;
  const bool keep_alive = parser.get().keep_alive() && !announces_body;
  if (route_match_.allowed.empty()) {
    return answer(Response::text(404, "404 page not found\n"), keep_alive);
  }
  Response response = Response::text(405, "method not allowed\n");
  response.headers.emplace_back("Allow", route_match_.allowed);
  answer(std::move(response), keep_alive);
}

template <class Stream>
void HttpSession<Stream>::sendContinue() {
  continue_ = {http::status::continue_, 11};
  http::async_write(stream_, continue_,
                    [self = this->shared_from_this()](const beast::error_code& ec, std::size_t) {
                      if (ec) return self->close();
                      self->readBody();
                    });
}

template <class Stream>
void HttpSession<Stream>::readBody() {
  if (request_.parser().is_done()) return onBody({});
  http::async_read(stream_, request_.buffer(), request_.parser(),
                   [self = this->shared_from_this()](const beast::error_code& ec, std::size_t) {
                     self->onBody(ec);
                   });
}

template <class Stream>
void HttpSession<Stream>::onBody(const beast::error_code& ec) {
  if (ec) return refuse(ec);
  if (auto refusal = request_.finishBody()) return refuse(std::move(*refusal));
  dispatch(request_.parser().release());
}

// A read that failed: answer what can be answered (431, 413, 400), close on the rest.
template <class Stream>
void HttpSession<Stream>::refuse(const beast::error_code& ec) {
  body_reservation_.reset();
  if (server_.stopping() || closed_) return close();
  auto refusal = request_.refusalFor(ec);
  if (!refusal) return close();
  refuse(std::move(*refusal));
}

template <class Stream>
void HttpSession<Stream>::refuse(Refusal refusal) {
  server_.degraded("request_refused", remote_address_ + ": " + refusal.body);
  answer(Response::text(refusal.status, std::move(refusal.body)), false);
}

template <class Stream>
void HttpSession<Stream>::dispatch(HttpRequest http_request) {
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
  const bool keep_alive = http_request.keep_alive();
  route_ = std::string(route_match_.route);
  answering_ = true;
  // The work guard keeps the I/O thread running until the answer is posted back to it.
  auto work = std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(
      server_.ioc().get_executor());
  asio::post(server_.workers(), [self = this->shared_from_this(), handler = route_match_.handler,
                                 request = std::move(request), keep_alive, work]() mutable {
    Response response;
    try {
      response = (*handler)(request);
    } catch (const std::exception& e) {
      self->server_.degraded("handler_failed", request.path + ": " + e.what());
      response = Response::text(500, "internal error\n");
    } catch (...) {
      self->server_.degraded("handler_failed", request.path + ": unknown exception");
      response = Response::text(500, "internal error\n");
    }
    request = {};  // the body goes before the budget is given back
    asio::post(self->server_.ioc(),
               [self, response = std::move(response), keep_alive, work]() mutable {
                 self->answer(std::move(response), keep_alive);
               });
  });
}

template <class Stream>
void HttpSession<Stream>::answer(Response response, bool keep_alive) {
  body_reservation_.reset();
  phase_ = ConnectionPhase::Active;
  answering_ = true;
  if (closed_) return;
  response_ = {};
  response_.version(11);
  response_.result(static_cast<unsigned>(response.status));
  response_.set(http::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) response_.set(name, value);
  response_.keep_alive(keep_alive && !server_.stopping());
  if (head_) {
    response_.content_length(response.body.size());
  } else {
    response_.body() = std::move(response.body);
    response_.prepare_payload();
  }
  beast::get_lowest_layer(stream_).expires_after(server_.options().limits.write_timeout);
  http::async_write(stream_, response_,
                    [self = this->shared_from_this()](const beast::error_code& ec, std::size_t) {
                      self->onWritten(ec);
                    });
}

template <class Stream>
void HttpSession<Stream>::onWritten(const beast::error_code& ec) {
  const auto& options = server_.options();
  if (options.observer) {
    options.observer(RequestRecord{method_, route_, static_cast<int>(response_.result_int()),
                                   options.clock->monotonicNow() - started_});
  }
  const bool keep_alive = response_.keep_alive();
  response_ = {};
  answering_ = false;
  if (ec) return close();
  if (!keep_alive || server_.stopping()) return closeGracefully();
  request_.releaseIdleBuffer();
  waitForRequest();
}

template <class Stream>
void HttpSession<Stream>::closeGracefully() {
  if (closed_ || server_.stopping()) return close();
  if constexpr (kTls) {
    phase_ = ConnectionPhase::Active;
    beast::get_lowest_layer(stream_).expires_after(kCloseNotifyBudget);
    stream_.async_shutdown(
        [self = this->shared_from_this()](const beast::error_code&) { self->close(); });
  } else {
    close();
  }
}

template <class Stream>
void HttpSession<Stream>::close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  auto& socket = beast::get_lowest_layer(stream_).socket();
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

template class HttpSession<TlsStream>;
template class HttpSession<PlainStream>;

}  // namespace shardscaler::serving::detail
