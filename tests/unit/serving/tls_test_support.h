// Certificates made for a test at the real current time, the fingerprint of the one a server
// presented to test_kit's HTTP client, and a raw TLS client. Unit tests only; the client talks to
// 127.0.0.1 and nothing else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shardscaler/serving/certificate_authority.h"
#include "shardscaler/serving/certificate_source.h"
#include "shardscaler/test_kit/http_client.h"

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

// The SHA-256 fingerprint of the certificate the server presented, empty when there was none.
std::string serverFingerprint(const test_kit::ClientReply& reply);

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
