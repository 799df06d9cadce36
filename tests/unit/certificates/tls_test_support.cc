#include "tls_test_support.h"

#include <chrono>
#include <stdexcept>

#include "shardscaler/certificates/x509.h"

namespace shardscaler::certificates::testing {

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

}  // namespace shardscaler::certificates::testing
