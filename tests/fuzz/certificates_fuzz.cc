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
#include "shardscaler/serving/certificate_authority.h"
#include "shardscaler/serving/certificate_plan.h"
#include "shardscaler/serving/trust_bundle.h"
#include "shardscaler/serving/x509.h"

namespace {

namespace serving = shardscaler::serving;

void readPem(std::string_view pem) {
  auto key = serving::PrivateKey::fromPem(pem);
  if (auto certificates = serving::Certificate::allFromPem(pem)) {
    for (const serving::Certificate& c : *certificates) {
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
      (void)c.isIssuedBy(certificates->front());
      (void)c.covers("shardscaler-webhook.monitoring.svc");
      (void)c.covers("10.0.0.1");
      if (key) (void)key->matches(c);
    }
    (void)serving::concatPem(*certificates);
  }
  (void)serving::Certificate::fromPem(pem);
  (void)serving::TrustBundle::fromPem(std::string(pem));
  (void)serving::CertificateAuthority::fromPem(pem, pem);
  if (key) (void)key->pem();
}

void readSecret(const nlohmann::json& secret) {
  const serving::StoredCertificates stored = serving::detail::decodeCertificateSecret(secret);
  (void)serving::detail::servingCertificateFromSecret(secret);
  // 2026-06-01T00:00:00Z
  const serving::SystemTime now{std::chrono::seconds(1780272000)};
  (void)serving::planCertificates(stored, {"shardscaler-webhook.monitoring.svc", "10.0.0.1"},
                                  serving::RotationPolicy{}, now);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = shardscaler::fuzz::text(data, size);
  readPem(text);
  const nlohmann::json secret = shardscaler::fuzz::json(text);
  if (!secret.is_discarded()) readSecret(secret);
  return 0;
}
