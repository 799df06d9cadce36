// Certificates made for a test at the real current time, and a libcurl HTTPS client that trusts
// only what a test gives it. Unit tests only; the client talks to 127.0.0.1 and nothing else.
#pragma once

#include <curl/curl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardscaler/serving/certificate_authority.h"
#include "shardscaler/serving/certificate_source.h"

namespace shardscaler::serving::testing {

struct TestPki {
  CertificateAuthority ca;
  std::shared_ptr<const ServingCertificate> serving;  // for 127.0.0.1 and localhost
};

// A CA and a serving certificate valid from an hour ago for an hour (TLS peers check real time).
TestPki makeTestPki(const std::string& ca_name = "test-ca");
KeyedCertificate issueClientCertificate(const CertificateAuthority& ca,
                                        const std::string& common_name,
                                        const std::vector<std::string>& organizations = {});

struct CurlRequest {
  std::string url;
  std::string method = "GET";
  std::string body;
  std::vector<std::string> headers;  // "Name: value"
  std::string ca_pem;                // the only CA trusted
  std::string client_certificate_pem;
  std::string client_key_pem;
  long ssl_version = CURL_SSLVERSION_DEFAULT;  // e.g. CURL_SSLVERSION_TLSv1_1 | ..._MAX_TLSv1_1
};

struct CurlReply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string error;               // curl's error buffer
  std::string server_fingerprint;  // SHA-256 of the certificate the server presented
  std::string tls_version;         // "TLSv1.3"
};

// One easy handle: consecutive perform() calls reuse the connection when the server keeps it.
class CurlClient {
 public:
  CurlClient();
  ~CurlClient();
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;

  CurlReply perform(const CurlRequest& request);

 private:
  CURL* curl_;
};

// A fresh connection per call.
CurlReply curlOnce(const CurlRequest& request);

// A TLS client that can stop halfway (no handshake, or half a request), for tests of what the
// server does with slow or broken clients. Every operation ends within five seconds.
class RawTlsClient {
 public:
  RawTlsClient(std::uint16_t port, const std::string& ca_pem);
  ~RawTlsClient();
  RawTlsClient(const RawTlsClient&) = delete;
  RawTlsClient& operator=(const RawTlsClient&) = delete;

  bool connect();    // TCP only
  bool handshake();  // TLS on top, verifying the server against the CA
  bool send(const std::string& bytes);
  // True when the server closes the connection (EOF or reset) within five seconds.
  bool closedByServer();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardscaler::serving::testing
