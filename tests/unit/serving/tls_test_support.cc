#include "tls_test_support.h"

#include <openssl/ssl.h>

#include <chrono>
#include <stdexcept>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "shardscaler/serving/x509.h"

namespace shardscaler::serving::testing {
namespace {

struct Transfer {
  CURL* curl;
  CurlReply* reply;
};

std::string tlsVersion(CURL* curl);

// The TLS session is only reachable during the transfer, so the version is read here.
size_t appendBody(char* data, size_t size, size_t count, void* context) {
  auto* transfer = static_cast<Transfer*>(context);
  if (transfer->reply->tls_version.empty())
    transfer->reply->tls_version = tlsVersion(transfer->curl);
  transfer->reply->body.append(data, size * count);
  return size * count;
}

curl_blob blobOf(const std::string& text) {
  return curl_blob{const_cast<char*>(text.data()), text.size(), CURL_BLOB_COPY};
}

std::string serverFingerprint(CURL* curl) {
  curl_certinfo* info = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_CERTINFO, &info) != CURLE_OK || info == nullptr ||
      info->num_of_certs < 1) {
    return {};
  }
  for (curl_slist* item = info->certinfo[0]; item != nullptr; item = item->next) {
    const std::string line = item->data;
    if (line.starts_with("Cert:")) {
      auto certificate = Certificate::fromPem(line.substr(5));
      return certificate ? certificate->fingerprint() : std::string();
    }
  }
  return {};
}

std::string tlsVersion(CURL* curl) {
  curl_tlssessioninfo* session = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_TLS_SSL_PTR, &session) != CURLE_OK || session == nullptr ||
      session->backend != CURLSSLBACKEND_OPENSSL || session->internals == nullptr) {
    return {};
  }
  return SSL_get_version(static_cast<SSL*>(session->internals));
}

}  // namespace

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

CurlClient::CurlClient() : curl_(curl_easy_init()) {
  if (curl_ == nullptr) throw std::runtime_error("curl_easy_init failed");
}

CurlClient::~CurlClient() { curl_easy_cleanup(curl_); }

CurlReply CurlClient::perform(const CurlRequest& request) {
  CurlReply reply;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_reset(curl_);
  curl_easy_setopt(curl_, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (!request.body.empty() || request.method == "POST") {
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_slist* headers = nullptr;
  for (const auto& header : request.headers) headers = curl_slist_append(headers, header.c_str());
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
  curl_blob ca = blobOf(request.ca_pem);
  curl_easy_setopt(curl_, CURLOPT_CAINFO_BLOB, &ca);
  curl_easy_setopt(curl_, CURLOPT_CAPATH, nullptr);
  curl_blob client_cert = blobOf(request.client_certificate_pem);
  curl_blob client_key = blobOf(request.client_key_pem);
  if (!request.client_certificate_pem.empty()) {
    curl_easy_setopt(curl_, CURLOPT_SSLCERT_BLOB, &client_cert);
    curl_easy_setopt(curl_, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(curl_, CURLOPT_SSLKEY_BLOB, &client_key);
    curl_easy_setopt(curl_, CURLOPT_SSLKEYTYPE, "PEM");
  }
  curl_easy_setopt(curl_, CURLOPT_SSLVERSION, request.ssl_version);
  curl_easy_setopt(curl_, CURLOPT_CERTINFO, 1L);
  curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, appendBody);
  Transfer transfer{curl_, &reply};
  curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  reply.code = curl_easy_perform(curl_);
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.error = error;
  if (reply.code == CURLE_OK) reply.server_fingerprint = serverFingerprint(curl_);
  curl_slist_free_all(headers);
  return reply;
}

CurlReply curlOnce(const CurlRequest& request) {
  CurlClient client;
  return client.perform(request);
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
