#include "shardscaler/certificates/certificate_plan.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::certificates {
namespace {

using k8s::formatTime;

// The moment `rotate_at` of the certificate's life has passed.
SystemTime rotationTime(const Certificate& certificate, double rotate_at) {
  const auto life = certificate.notAfter() - certificate.notBefore();
  return certificate.notBefore() +
         std::chrono::duration_cast<SystemTime::duration>(life * rotate_at);
}

// The moment the CA should stop signing: at its rotation time, or once what it signs next
// would outlive it.
SystemTime caRetirementTime(const Certificate& ca, const RotationPolicy& policy) {
  return std::min(rotationTime(ca, policy.rotate_at), ca.notAfter() - policy.serving_validity);
}

// Index in `bundle` of the unexpired CA that signed `leaf`, or nullopt.
std::optional<std::size_t> issuerIndex(const Certificate& leaf,
                                       const std::vector<Certificate>& bundle, SystemTime now) {
  for (std::size_t i = 0; i < bundle.size(); ++i) {
    if (now < bundle[i].notAfter() && leaf.isIssuedBy(bundle[i])) return i;
  }
  return std::nullopt;
}

std::vector<std::string> missingHosts(const Certificate& leaf,
                                      const std::vector<std::string>& hosts) {
  std::vector<std::string> missing;
  for (const auto& host : hosts) {
    if (!leaf.covers(host)) missing.push_back(host);
  }
  return missing;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Why the stored serving certificate cannot be served any more; "" when it can.
std::string servingProblem(const StoredCertificates& stored, const std::vector<std::string>& hosts,
                           const std::optional<std::size_t>& issuer, SystemTime now) {
  if (!stored.serving) return "no usable serving certificate (" + stored.serving_problem + ")";
  const Certificate& leaf = stored.serving->certificate;
  if (now >= leaf.notAfter()) {
    return "the serving certificate expired at " + formatTime(leaf.notAfter());
  }
  if (!issuer) return "the serving certificate is not signed by a CA of the bundle";
  if (auto missing = missingHosts(leaf, hosts); !missing.empty()) {
    return "the serving certificate does not cover " + join(missing);
  }
  return {};
}

}  // namespace

Expected<void> validate(const RotationPolicy& policy) {
  using std::chrono::seconds;
  if (!(policy.rotate_at > 0.0 && policy.rotate_at < 1.0)) {
    return std::unexpected("rotation fraction must be between 0 and 1 (exclusive)");
  }
  if (policy.serving_validity <= seconds(0) || policy.ca_validity <= seconds(0)) {
    return std::unexpected("certificate validities must be positive");
  }
  if (policy.backdate < seconds(0) || policy.bundle_propagation < seconds(0)) {
    return std::unexpected("backdate and bundle propagation must not be negative");
  }
  if (policy.ca_validity < 2 * policy.serving_validity) {
    return std::unexpected(
        "the CA validity must be at least twice the serving certificate validity, or every CA "
        "would be too short-lived to sign at once");
  }
  // Time left after the serving certificate's rotation point must cover a CA change.
  const auto left =
      std::chrono::duration<double>(policy.serving_validity) * (1.0 - policy.rotate_at);
  if (std::chrono::duration<double>(policy.bundle_propagation) >= left) {
    return std::unexpected(
        "the bundle propagation time must be shorter than the part of the serving validity left "
        "after rotation, or a certificate could expire while a new CA propagates");
  }
  // A backdated certificate counts the backdate in its life; it must not be due at birth.
  const auto due_after = std::chrono::duration<double>(policy.serving_validity) * policy.rotate_at;
  if (std::chrono::duration<double>(policy.backdate) * (1.0 - policy.rotate_at) >= due_after) {
    return std::unexpected("the backdate is so long that a new certificate would be due at once");
  }
  return {};
}

namespace {

// Pulls plan.review_at earlier to `at`.
void reviewAt(CertificatePlan& plan, SystemTime at) {
  plan.review_at = std::min(plan.review_at, at);
}

// The signing CA: a new one when none is usable or it is due for retirement.
void planSigningCa(CertificatePlan& plan, const StoredCertificates& stored,
                   const RotationPolicy& policy, SystemTime now) {
  if (!stored.signing_ca) {
    plan.new_ca = true;
    plan.reasons.push_back("no usable signing CA (" + stored.ca_problem + ")");
    return;
  }
  const Certificate& ca = stored.signing_ca->certificate();
  const SystemTime retire = caRetirementTime(ca, policy);
  if (now >= retire) {
    plan.new_ca = true;
    plan.reasons.push_back("CA \"" + ca.subjectCommonName() + "\" (valid until " +
                           formatTime(ca.notAfter()) + ") is due for rotation since " +
                           formatTime(retire));
  } else {
    reviewAt(plan, retire);
  }
}

// Hosts another replica asked for stay, so replicas that want different names converge.
void keepOtherReplicasHosts(CertificatePlan& plan, const Certificate& leaf) {
  for (const auto& names : {leaf.dnsNames(), leaf.ipAddresses()}) {
    for (const auto& name : names) {
      if (std::find(plan.serving_hosts.begin(), plan.serving_hosts.end(), name) ==
          plan.serving_hosts.end()) {
        plan.serving_hosts.push_back(name);
      }
    }
  }
}

// Signed by an older CA of the bundle: switch once the signing CA has been published long enough
// for every client to trust it.
void planSwitchToSigningCa(CertificatePlan& plan, const RotationPolicy& policy, SystemTime now) {
  if (!plan.ca_published_at) {
    plan.ca_published_at = now;
    plan.reasons.emplace_back("the signing CA has no publication time; counting from now");
  }
  const SystemTime switch_at = *plan.ca_published_at + policy.bundle_propagation;
  if (now >= switch_at) {
    plan.issue_serving = true;
    plan.reasons.push_back("the signing CA was published at " + formatTime(*plan.ca_published_at) +
                           "; the serving certificate moves to it");
  } else {
    reviewAt(plan, switch_at);
  }
}

// The serving certificate: issued anew when it has a problem, is due, or moves to the signing CA.
void planServing(CertificatePlan& plan, const StoredCertificates& stored,
                 const std::vector<std::string>& hosts, const RotationPolicy& policy,
                 SystemTime now, const Certificate* leaf, std::optional<std::size_t> issuer) {
  const bool issued_by_signer = !plan.new_ca && issuer == std::size_t{0};
  plan.ca_published_at = plan.new_ca ? std::optional(now) : stored.ca_published_at;
  plan.serving_hosts = hosts;
  if (auto problem = servingProblem(stored, hosts, issuer, now); !problem.empty()) {
    plan.issue_serving = true;
    plan.reasons.push_back(problem);
    if (leaf && issuer && now < leaf->notAfter()) keepOtherReplicasHosts(plan, *leaf);
  } else if (issued_by_signer) {
    const SystemTime due = rotationTime(*leaf, policy.rotate_at);
    if (now >= due) {
      plan.issue_serving = true;
      plan.reasons.push_back("the serving certificate (valid until " +
                             formatTime(leaf->notAfter()) + ") is due for rotation since " +
                             formatTime(due));
    } else {
      reviewAt(plan, due);
    }
  } else if (!plan.new_ca) {
    planSwitchToSigningCa(plan, policy, now);
  } else {
    // A new CA is being made: the current certificate is served until the CA has propagated.
    reviewAt(plan, now + policy.bundle_propagation);
  }
  if (!plan.issue_serving && leaf) reviewAt(plan, leaf->notAfter());
}

// Older CAs: kept while a certificate they signed may still be served.
void planOldCas(CertificatePlan& plan, const StoredCertificates& stored, SystemTime now,
                const Certificate* leaf, std::optional<std::size_t> issuer) {
  const bool issued_by_signer = !plan.new_ca && issuer == std::size_t{0};
  plan.old_cas_needed_until = stored.old_cas_needed_until;
  const bool leaf_from_old_ca = leaf && issuer && !issued_by_signer && now < leaf->notAfter();
  if (plan.issue_serving && leaf_from_old_ca) {
    plan.old_cas_needed_until =
        std::max(plan.old_cas_needed_until.value_or(SystemTime{}), leaf->notAfter());
  }
  const std::size_t first_old = plan.new_ca ? 0 : 1;
  std::set<std::string> seen;
  if (!plan.new_ca && !stored.bundle.empty()) seen.insert(stored.bundle.front().fingerprint());
  for (std::size_t i = first_old; i < stored.bundle.size(); ++i) {
    const Certificate& ca = stored.bundle[i];
    if (!ca.isCa() || !seen.insert(ca.fingerprint()).second) continue;
    if (now >= ca.notAfter()) {
      plan.reasons.push_back("CA \"" + ca.subjectCommonName() + "\" expired at " +
                             formatTime(ca.notAfter()) + "; dropped from the bundle");
      continue;
    }
    const bool signs_served = !plan.issue_serving && leaf_from_old_ca && issuer == i;
    // Without a recorded time, nothing says the CA is unneeded: it stays until it expires.
    const bool needed =
        signs_served || !plan.old_cas_needed_until || now < *plan.old_cas_needed_until;
    if (!needed) {
      plan.reasons.push_back("CA \"" + ca.subjectCommonName() +
                             "\" signs nothing that may still be served; dropped from the bundle");
      continue;
    }
    plan.old_cas.push_back(ca);
    reviewAt(plan, ca.notAfter());
    if (plan.old_cas_needed_until && !signs_served) reviewAt(plan, *plan.old_cas_needed_until);
  }
  if (plan.old_cas.empty()) plan.old_cas_needed_until.reset();
}

}  // namespace

CertificatePlan planCertificates(const StoredCertificates& stored,
                                 const std::vector<std::string>& hosts,
                                 const RotationPolicy& policy, SystemTime now) {
  CertificatePlan plan;
  plan.review_at = now + std::chrono::hours(24);
  planSigningCa(plan, stored, policy, now);
  const Certificate* leaf = stored.serving ? &stored.serving->certificate : nullptr;
  const auto issuer = leaf ? issuerIndex(*leaf, stored.bundle, now) : std::nullopt;
  planServing(plan, stored, hosts, policy, now, leaf, issuer);
  planOldCas(plan, stored, now, leaf, issuer);
  const bool bundle_changed =
      plan.new_ca || plan.old_cas.size() + 1 != stored.bundle.size() ||
      !std::equal(plan.old_cas.begin(), plan.old_cas.end(), stored.bundle.begin() + 1);
  plan.write = plan.new_ca || plan.issue_serving || bundle_changed ||
               plan.ca_published_at != stored.ca_published_at ||
               plan.old_cas_needed_until != stored.old_cas_needed_until;
  return plan;
}

Expected<CertificateSecretData> applyCertificatePlan(const CertificatePlan& plan,
                                                     const StoredCertificates& stored,
                                                     const RotationPolicy& policy,
                                                     const CertificateNames& names,
                                                     SystemTime now) {
  const SystemTime not_before = now - policy.backdate;
  std::optional<CertificateAuthority> signer = stored.signing_ca;
  if (plan.new_ca) {
    auto ca =
        CertificateAuthority::generate(names.ca_common_name, not_before, now + policy.ca_validity);
    if (!ca) return std::unexpected("generate CA: " + ca.error());
    signer = std::move(*ca);
  }
  if (!signer) return std::unexpected("no signing CA to carry out the plan with");

  std::optional<KeyedCertificate> serving = stored.serving;
  if (plan.issue_serving) {
    auto issued = signer->issue({.common_name = names.serving_common_name,
                                 .hosts = plan.serving_hosts,
                                 .usage = CertificateUsage::Server,
                                 .not_before = not_before,
                                 .not_after = now + policy.serving_validity});
    if (!issued) return std::unexpected("issue serving certificate: " + issued.error());
    serving = std::move(*issued);
  }
  if (!serving) return std::unexpected("no serving certificate to write");

  std::vector<Certificate> bundle{signer->certificate()};
  bundle.insert(bundle.end(), plan.old_cas.begin(), plan.old_cas.end());
  return CertificateSecretData{
      .tls_crt = serving->certificate.pem(),
      .tls_key = serving->key.pem(),
      .ca_crt = concatPem(bundle),
      .ca_key = signer->key().pem(),
      .ca_published_at = plan.ca_published_at,
      .old_cas_needed_until = plan.old_cas_needed_until,
  };
}

}  // namespace shardscaler::certificates
