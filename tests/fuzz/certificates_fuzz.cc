// libFuzzer target: PEM certificates and keys as shardscaler reads them from outside (the front
// proxy's CA in a ConfigMap, cert-manager's files), and the Secret that holds the webhook's CA and
// serving certificate, as every replica re-reads it (anyone who may write Secrets in
// shardscaler's namespace could have rewritten it), with the rotation plan made from it. An input
// is read as PEM and, when it is JSON, as that Secret.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "certificate_secret.h"
#include "fuzz_input.h"
#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/certificate_plan.h"
#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/certificates/x509.h"

namespace {

namespace certificates = shardscaler::certificates;

void readPem(std::string_view pem) {
  auto key = certificates::PrivateKey::fromPem(pem);
  if (auto chain = certificates::Certificate::allFromPem(pem)) {
    for (const certificates::Certificate& c : *chain) {
      (void)c.pem();
      (void)c.subjectCommonName();
      (void)c.subjectOrganizations();
      (void)c.issuerCommonName();
      (void)c.notBefore();
      (void)c.notAfter();
      (void)c.dnsNames();
      (void)c.ipAddresses();
      (void)c.isCa();
      (void)c.fingerprint();
      (void)c.isIssuedBy(chain->front());
      (void)c.covers("shardscaler-webhook.monitoring.svc");
      (void)c.covers("10.0.0.1");
      if (key) (void)key->matches(c);
    }
    (void)certificates::concatPem(*chain);
  }
  (void)certificates::Certificate::fromPem(pem);
  (void)certificates::TrustBundle::fromPem(std::string(pem));
  (void)certificates::CertificateAuthority::fromPem(pem, pem);
  if (key) (void)key->pem();
}

void readSecret(const nlohmann::json& secret) {
  const certificates::StoredCertificates stored =
      certificates::detail::decodeCertificateSecret(secret);
  (void)certificates::detail::servingCertificateFromSecret(secret);
  // 2026-06-01T00:00:00Z
  const certificates::SystemTime now{std::chrono::seconds(1780272000)};
  (void)certificates::planCertificates(stored, {"shardscaler-webhook.monitoring.svc", "10.0.0.1"},
                                       certificates::RotationPolicy{}, now);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = shardscaler::fuzz::text(data, size);
  readPem(text);
  const nlohmann::json secret = shardscaler::fuzz::json(text);
  if (!secret.is_discarded()) readSecret(secret);
  return 0;
}
