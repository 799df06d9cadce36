// Certificates made for a test at the real current time and the fingerprint of the one a server
// presented to test_kit's HTTP client. Unit tests only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/test_kit/http_client.h"

namespace shardscaler::certificates::testing {

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

}  // namespace shardscaler::certificates::testing
