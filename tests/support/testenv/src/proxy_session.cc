#include "proxy_session.h"

#include <chrono>
#include <limits>
#include <utility>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <nlohmann/json.hpp>

#include "fault_answer.h"

namespace shardscaler::testenv::control_plane_detail {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr std::uint64_t kRequestBodyLimit = 64ULL * 1024 * 1024;

// The API server closed a kept-alive connection before answering: safe to send again.
bool closedBeforeAnswer(beast::error_code ec) {
  return ec == http::error::end_of_stream || ec == asio::ssl::error::stream_truncated ||
         ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe;
}

}  // namespace

ProxySession::ProxySession(FaultProxyState& state, asio::ip::tcp::socket socket)
    : state_(state), client_(std::move(socket), state.server_tls), timer_(client_.get_executor()) {}

void ProxySession::start() {
  client_.async_handshake(asio::ssl::stream_base::server,
                          [self = shared_from_this()](beast::error_code ec) {
                            if (ec) return self->close();
                            self->readRequest();
                          });
}

void ProxySession::close() {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  beast::get_lowest_layer(client_).close();
  if (upstream_) beast::get_lowest_layer(*upstream_).close();
}

void ProxySession::readRequest() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(kRequestBodyLimit);
  http::async_read(
      client_, client_buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onRequest(ec); });
}

void ProxySession::onRequest(beast::error_code ec) {
  if (ec || closed_) return close();  // the client went away (or stop)
  request_ = parser_->release();
  method_ = std::string(request_.method_string());
  info_ = classifyApiRequest(method_,
                             std::string_view(request_.target().data(), request_.target().size()));
  ++state_.counters.requests;
  decision_ = state_.plan.decide(info_);
  if (!decision_.latency) return act();
  state_.injected(ApiFault::Latency, info_, method_,
                  std::to_string(decision_.latency->count()) + "ms");
  timer_.expires_after(*decision_.latency);
  timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
    if (wait_ec || self->closed_) return;
    self->act();
  });
}

void ProxySession::act() {
  if (!decision_.refusal) return forward();
  const ApiFault fault = *decision_.refusal;
  auto answer = faultAnswer(fault, info_);
  state_.injected(fault, info_, method_, std::to_string(answer.status));
  respond(answer.status, std::move(answer.body), answer.retry_after_seconds, request_.keep_alive());
}

void ProxySession::respond(int status, std::string body, std::optional<int> retry_after,
                           bool keep_alive) {
  answer_ = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status),
                                                                request_.version());
  answer_->set(http::field::content_type, "application/json");
  answer_->set(http::field::cache_control, "no-cache, private");
  if (retry_after) answer_->set(http::field::retry_after, std::to_string(*retry_after));
  answer_->keep_alive(keep_alive);
  answer_->body() = std::move(body);
  answer_->prepare_payload();
  http::async_write(client_, *answer_,
                    [self = shared_from_this()](beast::error_code ec, std::size_t) {
                      if (ec || !self->answer_->keep_alive()) return self->close();
                      self->answer_.reset();
                      self->readRequest();
                    });
}

void ProxySession::forward() {
  ++state_.counters.forwarded;
  if (upstream_) {
    upstream_reused_ = true;
    return sendRequest();
  }
  connectUpstream();
}

void ProxySession::connectUpstream() {
  upstream_reused_ = false;
  upstream_buffer_.clear();
  upstream_ = std::make_unique<TlsStream>(client_.get_executor(), state_.client_tls);
  upstream_->set_verify_mode(asio::ssl::verify_peer);
  upstream_->set_verify_callback(
      asio::ssl::host_name_verification(state_.upstream.address().to_string()));
  auto& tcp = beast::get_lowest_layer(*upstream_);
  tcp.expires_after(kConnectTimeout);
  tcp.async_connect(state_.upstream, [self = shared_from_this()](beast::error_code ec) {
    if (self->closed_) return;
    if (ec) return self->upstreamFailed("connect", ec);
    self->upstream_->async_handshake(asio::ssl::stream_base::client,
                                     [self](beast::error_code handshake_ec) {
                                       if (self->closed_) return;
                                       if (handshake_ec)
                                         return self->upstreamFailed("TLS handshake", handshake_ec);
                                       // A watch is silent for as long as nothing changes; stop()
                                       // and the cut end it.
                                       beast::get_lowest_layer(*self->upstream_).expires_never();
                                       self->sendRequest();
                                     });
  });
}

void ProxySession::sendRequest() {
  http::async_write(
      *upstream_, request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (self->closed_) return;
        if (ec) return self->upstreamFailed("send request", ec);
        self->response_.emplace();
        self->response_->header_limit(kHeaderLimit);
        self->response_->body_limit(std::numeric_limits<std::uint64_t>::max());
        http::async_read_header(
            *self->upstream_, self->upstream_buffer_, *self->response_,
            [self](beast::error_code read_ec, std::size_t) { self->onResponseHeader(read_ec); });
      });
}

void ProxySession::onResponseHeader(beast::error_code ec) {
  if (closed_) return;
  if (ec) return upstreamFailed("read response", ec);
  if (info_.isWatch()) {
    // One watch per connection: it closes when the watch ends (Connection: close tells the
    // client), so the client's connection can be watched for going away meanwhile.
    response_->get().keep_alive(false);
    watchClient();
  }
  serializer_.emplace(response_->get());
  if (decision_.cut_after) {
    timer_.expires_after(*decision_.cut_after);
    timer_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (wait_ec || self->closed_) return;  // the watch ended first
      self->cutWatch();
    });
  }
  http::async_write_header(client_, *serializer_,
                           [self = shared_from_this()](beast::error_code write_ec, std::size_t) {
                             if (write_ec || self->closed_) return self->close();
                             self->relayBody();
                           });
}

// Beast's relay idiom (buffer_body): read what the API server has sent so far into a small
// buffer, write it on as one chunk, repeat. read_some, not read: a watch event must go on as
// soon as it arrives, not when the buffer is full.
void ProxySession::relayBody() {
  auto& body = response_->get().body();
  if (response_->is_done()) {
    body.data = nullptr;
    body.size = 0;
    body.more = false;
    http::async_write(client_, *serializer_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        self->onBodyWritten(ec);
                      });
    return;
  }
  body.data = body_buffer_.data();
  body.size = body_buffer_.size();
  http::async_read_some(
      *upstream_, upstream_buffer_, *response_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onBodyRead(ec); });
}

void ProxySession::onBodyRead(beast::error_code ec) {
  if (ec == http::error::need_buffer) ec = {};
  if (ec || closed_) return close();  // the client sees a cut stream, as the API server gave
  auto& body = response_->get().body();
  const std::size_t parsed = body_buffer_.size() - body.size;
  // Only framing (a chunk header) was read: nothing to pass on yet. An empty buffer must not
  // reach the serializer, which would write it as the last chunk and end the response early.
  if (parsed == 0 && !response_->is_done()) return relayBody();
  body.data = parsed == 0 ? nullptr : body_buffer_.data();
  body.size = parsed;
  body.more = !response_->is_done();
  http::async_write(client_, *serializer_,
                    [self = shared_from_this()](beast::error_code write_ec, std::size_t) {
                      self->onBodyWritten(write_ec);
                    });
}

void ProxySession::onBodyWritten(beast::error_code ec) {
  if (ec == http::error::need_buffer) ec = {};
  if (ec || closed_) return close();
  if (!serializer_->is_done()) return relayBody();
  finishExchange();
}

void ProxySession::finishExchange() {
  timer_.cancel();
  const bool keep_alive = response_->get().keep_alive() && request_.keep_alive();
  if (!response_->get().keep_alive()) {
    beast::get_lowest_layer(*upstream_).close();
    upstream_.reset();
  }
  serializer_.reset();
  response_.reset();
  decision_ = {};
  if (!keep_alive) return close();
  readRequest();
}

void ProxySession::upstreamFailed(const char* what, beast::error_code ec) {
  if (upstream_reused_ && !serializer_ && closedBeforeAnswer(ec)) {
    // The API server closed the idle connection before this request reached it.
    beast::get_lowest_layer(*upstream_).close();
    return connectUpstream();
  }
  if (upstream_) beast::get_lowest_layer(*upstream_).close();
  upstream_.reset();
  ++state_.counters.upstream_errors;
  const nlohmann::json status{
      {"kind", "Status"},
      {"apiVersion", "v1"},
      {"metadata", nlohmann::json::object()},
      {"status", "Failure"},
      {"message", std::string("test API fault proxy: no answer from the API server (") + what +
                      "): " + ec.message()},
      {"reason", "ServiceUnavailable"},
      {"code", 502}};
  respond(502, status.dump(), std::nullopt, /*keep_alive=*/false);
}

void ProxySession::watchClient() {
  client_.async_read_some(asio::buffer(client_probe_),
                          [self = shared_from_this()](beast::error_code, std::size_t) {
                            // Gone, or talking on a watch's connection (no HTTP/1.1 client
                            // does): either way the exchange is over.
                            self->close();
                          });
}

void ProxySession::cutWatch() {
  state_.injected(ApiFault::CutWatch, info_, method_,
                  "after " + std::to_string(decision_.cut_after->count()) + "ms");
  close();
}

}  // namespace shardscaler::testenv::control_plane_detail
