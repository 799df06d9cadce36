#include "shardscaler/test_kit/raw_tls_client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

namespace shardscaler::test_kit {

namespace asio = boost::asio;
namespace beast = boost::beast;

struct RawTlsClient::State {
  std::uint16_t port = 0;
  Options options;
  asio::io_context ioc;
  asio::ssl::context context{asio::ssl::context::tls_client};
  // Made once the context is set up: a stream's TLS object copies the context's settings.
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  bool handshaken = false;
  std::string received;  // read but not yet returned
  beast::error_code last_error;

  // Runs one operation to completion or to the timeout.
  template <typename Start>
  beast::error_code run(Start start) {
    beast::error_code result = asio::error::would_block;
    beast::get_lowest_layer(*tls).expires_after(options.timeout);
    start([&](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    if (result) last_error = result;
    return result;
  }

  // Reads what arrives next into `received`; false at EOF, reset or timeout.
  bool readMore() {
    char chunk[4096];
    std::size_t got = 0;
    const auto ec = run([&](auto handler) {
      auto done = [&, handler](beast::error_code e, std::size_t n) mutable {
        got = n;
        handler(e);
      };
      if (handshaken) {
        tls->async_read_some(asio::buffer(chunk), done);
      } else {
        beast::get_lowest_layer(*tls).async_read_some(asio::buffer(chunk), done);
      }
    });
    received.append(chunk, got);
    return !ec;
  }
};

RawTlsClient::RawTlsClient(std::uint16_t port, const std::string& ca_pem)
    : RawTlsClient(port, Options{.ca_pem = ca_pem}) {}

RawTlsClient::RawTlsClient(std::uint16_t port, Options options)
    : state_(std::make_unique<State>()) {
  state_->port = port;
  state_->options = std::move(options);
  state_->context.add_certificate_authority(asio::buffer(state_->options.ca_pem));
  state_->context.set_verify_mode(asio::ssl::verify_peer);
  SSL_CTX* native = state_->context.native_handle();
  // TLS 1.0 and 1.1 need OpenSSL's security level 0 to be offered at all.
  if (state_->options.min_version != 0 && state_->options.min_version < TLS1_2_VERSION) {
    SSL_CTX_set_security_level(native, 0);
  }
  if (state_->options.min_version != 0) {
    SSL_CTX_set_min_proto_version(native, state_->options.min_version);
  }
  if (state_->options.max_version != 0) {
    SSL_CTX_set_max_proto_version(native, state_->options.max_version);
  }
  state_->tls.emplace(state_->ioc, state_->context);
}

RawTlsClient::~RawTlsClient() = default;

bool RawTlsClient::connect() {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), state_->port);
  return !state_->run([&](auto handler) {
    beast::get_lowest_layer((*state_->tls)).async_connect(endpoint, handler);
  });
}

bool RawTlsClient::handshake() {
  state_->handshaken = !state_->run([&](auto handler) {
    (*state_->tls).async_handshake(asio::ssl::stream_base::client, handler);
  });
  return state_->handshaken;
}

std::string RawTlsClient::tlsVersion() const {
  if (!state_->handshaken) return {};
  return SSL_get_version((*state_->tls).native_handle());
}

std::string RawTlsClient::lastError() const { return state_->last_error.message(); }

bool RawTlsClient::send(const std::string& bytes) {
  return !state_->run([&](auto handler) {
    if (state_->handshaken) {
      asio::async_write((*state_->tls), asio::buffer(bytes), handler);
    } else {
      asio::async_write(beast::get_lowest_layer((*state_->tls)), asio::buffer(bytes), handler);
    }
  });
}

RawTlsClient::Response RawTlsClient::readResponse() {
  Response response;
  std::string& in = state_->received;
  std::size_t head_end = std::string::npos;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    if (!state_->readMore()) return response;
  }
  response.head = in.substr(0, head_end + 2);
  in.erase(0, head_end + 4);
  // "HTTP/1.1 431 ...", then the fields: only Content-Length matters here.
  const auto space = response.head.find(' ');
  if (space == std::string::npos) return response;
  response.status = std::atoi(response.head.c_str() + space + 1);
  std::size_t length = 0;
  std::size_t line_start = response.head.find("\r\n");
  while (line_start != std::string::npos && line_start + 2 < response.head.size()) {
    line_start += 2;
    const std::size_t line_end = response.head.find("\r\n", line_start);
    std::string line = response.head.substr(line_start, line_end - line_start);
    for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    constexpr std::string_view kLength = "content-length:";
    if (line.starts_with(kLength)) {
      length = std::strtoull(line.c_str() + kLength.size(), nullptr, 10);
    }
    line_start = line_end;
  }
  while (in.size() < length) {
    if (!state_->readMore()) break;
  }
  response.body = in.substr(0, std::min(length, in.size()));
  in.erase(0, response.body.size());
  return response;
}

bool RawTlsClient::closedByServer() {
  while (state_->readMore()) state_->received.clear();
  state_->received.clear();
  return state_->last_error != beast::error::timeout;
}

}  // namespace shardscaler::test_kit
