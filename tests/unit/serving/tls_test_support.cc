#include "tls_test_support.h"

#include <chrono>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "shardscaler/serving/x509.h"

namespace shardscaler::serving::testing {

TestPki makeTestPki(const std::string& ca_name) {
  const auto now = std::chrono::system_clock::now();
  auto ca = CertificateAuthority::generate(ca_name, now - std::chrono::hours(1),
                                           now + std::chrono::hours(2));
  if (!ca) throw std::runtime_error(ca.error());
  auto issued = ca->issue({.common_name = "test-server",
                           .hosts = {"127.0.0.1", "localhost"},
                           .not_before = now - std::chrono::hours(1),
                           .not_after = now + std::chrono::hours(1)});
  if (!issued) throw std::runtime_error(issued.error());
  auto serving = ServingCertificate::fromPem(issued->certificate.pem(), issued->key.pem(),
                                             ca->certificate().pem());
  if (!serving) throw std::runtime_error(serving.error());
  return TestPki{std::move(*ca), std::move(*serving)};
}

KeyedCertificate issueClientCertificate(const CertificateAuthority& ca,
                                        const std::string& common_name,
                                        const std::vector<std::string>& organizations) {
  const auto now = std::chrono::system_clock::now();
  auto issued = ca.issue({.common_name = common_name,
                          .organizations = organizations,
                          .usage = CertificateUsage::Client,
                          .not_before = now - std::chrono::hours(1),
                          .not_after = now + std::chrono::hours(1)});
  if (!issued) throw std::runtime_error(issued.error());
  return std::move(*issued);
}

std::string serverFingerprint(const test_kit::ClientReply& reply) {
  if (reply.server_certificate_pem.empty()) return {};
  auto certificate = Certificate::fromPem(reply.server_certificate_pem);
  return certificate ? certificate->fingerprint() : std::string();
}

namespace asio = boost::asio;
namespace beast = boost::beast;

struct RawTlsClient::State {
  std::uint16_t port;
  asio::io_context ioc;
  asio::ssl::context context{asio::ssl::context::tls_client};
  beast::ssl_stream<beast::tcp_stream> stream{ioc, context};
  bool handshaken = false;

  // Runs one operation to completion or to the five-second expiry.
  template <typename Start>
  beast::error_code run(Start start) {
    beast::error_code result = asio::error::would_block;
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(5));
    start([&](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }
};

RawTlsClient::RawTlsClient(std::uint16_t port, const std::string& ca_pem)
    : state_(std::make_unique<State>()) {
  state_->port = port;
  state_->context.add_certificate_authority(asio::buffer(ca_pem));
  state_->context.set_verify_mode(asio::ssl::verify_peer);
}

RawTlsClient::~RawTlsClient() = default;

bool RawTlsClient::connect() {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), state_->port);
  return !state_->run([&](auto handler) {
    beast::get_lowest_layer(state_->stream).async_connect(endpoint, handler);
  });
}

bool RawTlsClient::handshake() {
  state_->handshaken = !state_->run([&](auto handler) {
    state_->stream.async_handshake(asio::ssl::stream_base::client, handler);
  });
  return state_->handshaken;
}

bool RawTlsClient::send(const std::string& bytes) {
  return !state_->run(
      [&](auto handler) { asio::async_write(state_->stream, asio::buffer(bytes), handler); });
}

bool RawTlsClient::closedByServer() {
  char byte = 0;
  beast::error_code ec;
  do {
    ec = state_->run([&](auto handler) {
      if (state_->handshaken) {
        state_->stream.async_read_some(asio::buffer(&byte, 1), handler);
      } else {
        beast::get_lowest_layer(state_->stream).async_read_some(asio::buffer(&byte, 1), handler);
      }
    });
  } while (!ec);
  return ec != beast::error::timeout;
}

}  // namespace shardscaler::serving::testing
