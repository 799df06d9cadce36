// When to create, rotate and retire the CA and the serving certificate kept in a Secret: a pure
// function of what the Secret holds, the wanted hosts and the time. It must never drop a CA from
// the published bundle while a certificate it signed may still be served.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/x509.h"

namespace shardscaler::certificates {

struct RotationPolicy {
  std::chrono::seconds serving_validity{std::chrono::hours(24 * 365)};
  std::chrono::seconds ca_validity{std::chrono::hours(24 * 365 * 10)};
  // A certificate is replaced once this fraction of its life (notBefore..notAfter) has passed. A
  // CA is also replaced when it has less than serving_validity left, so it outlives what it signs.
  double rotate_at = 2.0 / 3.0;
  // How long a new CA is in the published bundle before a certificate it signed is served: time
  // for every replica to re-read the Secret and for the injector to update the caBundle.
  std::chrono::seconds bundle_propagation{std::chrono::minutes(2)};
  // notBefore is set this far in the past, for clients whose clocks lag ours.
  std::chrono::seconds backdate{std::chrono::minutes(5)};
};

// Rejects a policy under which certificates would be rotated at once, or would expire while a
// CA change propagates; the message names the setting.
Expected<void> validate(const RotationPolicy& policy);

// What the Secret holds, read without judging it: anything may be missing or garbage.
struct StoredCertificates {
  // tls.crt's first certificate with tls.key, when both parse and belong together.
  std::optional<KeyedCertificate> serving;
  std::string serving_problem;  // why `serving` is empty
  // ca.crt: the signing CA first (when ca.key names one), then the older CAs still trusted.
  std::vector<Certificate> bundle;
  // bundle.front() with ca.key, when they belong together.
  std::optional<CertificateAuthority> signing_ca;
  std::string ca_problem;  // why `signing_ca` is empty
  // When the signing CA joined the bundle.
  std::optional<SystemTime> ca_published_at;
  // Until when older CAs must stay in the bundle: the last serving certificate one of them
  // signed expires then.
  std::optional<SystemTime> old_cas_needed_until;
};

struct CertificatePlan {
  bool write = false;          // anything differs from what is stored
  bool new_ca = false;         // generate a CA: it signs from now on and leads the bundle
  bool issue_serving = false;  // issue a serving certificate from the signing CA (the new one)
  std::vector<std::string> serving_hosts;  // its SANs
  std::vector<Certificate> old_cas;        // the bundle after the signing CA
  std::optional<SystemTime> ca_published_at;
  std::optional<SystemTime> old_cas_needed_until;
  std::vector<std::string> reasons;  // one line per decision, for logs
  // Plan again by then at the latest, even if nothing else happens: something comes due.
  SystemTime review_at;
};

CertificatePlan planCertificates(const StoredCertificates& stored,
                                 const std::vector<std::string>& hosts,
                                 const RotationPolicy& policy, SystemTime now);

// What to write into the Secret after a plan was carried out.
struct CertificateSecretData {
  std::string tls_crt;
  std::string tls_key;
  std::string ca_crt;  // the signing CA, then the older CAs kept
  std::string ca_key;  // the signing CA's key
  std::optional<SystemTime> ca_published_at;
  std::optional<SystemTime> old_cas_needed_until;
};

struct CertificateNames {
  std::string ca_common_name = "shardscaler-ca";
  std::string serving_common_name = "shardscaler-serving";
};

// Carries out a plan: generates the CA and issues the certificate it asks for (validity from
// `now` and the policy), and keeps everything else as stored. No I/O.
Expected<CertificateSecretData> applyCertificatePlan(const CertificatePlan& plan,
                                                     const StoredCertificates& stored,
                                                     const RotationPolicy& policy,
                                                     const CertificateNames& names, SystemTime now);

}  // namespace shardscaler::certificates
