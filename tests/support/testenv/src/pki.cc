#include "pki.h"

#include <openssl/pem.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/openssl_handles.h"

#include "work_dir.h"

namespace shardscaler::testenv::control_plane_detail {
namespace {

namespace certs = shardscaler::certificates;

template <typename T>
T orThrow(Expected<T> value, const std::string& what) {
  if (!value) throw std::runtime_error("testenv pki: " + what + ": " + value.error());
  return std::move(*value);
}

// Every certificate's validity: an hour of back-dating absorbs clock differences; a month
// outlives any test run.
struct Validity {
  certs::SystemTime not_before;
  certs::SystemTime not_after;
};
Validity validity() {
  const auto now = std::chrono::system_clock::now();
  return {now - std::chrono::hours(1), now + std::chrono::days(30)};
}

certs::LeafCertificateSpec leaf(std::string common_name, std::vector<std::string> hosts,
                                certs::CertificateUsage usage = certs::CertificateUsage::Server) {
  const Validity v = validity();
  return {.common_name = std::move(common_name),
          .hosts = std::move(hosts),
          .organizations = {},
          .usage = usage,
          .not_before = v.not_before,
          .not_after = v.not_after};
}

certs::CertificateAuthority newCa(const std::string& common_name) {
  const Validity v = validity();
  return orThrow(certs::CertificateAuthority::generate(common_name, v.not_before, v.not_after),
                 "generate CA " + common_name);
}

certs::KeyedCertificate issue(const certs::CertificateAuthority& ca,
                              const certs::LeafCertificateSpec& spec) {
  return orThrow(ca.issue(spec), "issue " + spec.common_name);
}

std::string publicKeyPem(const certs::PrivateKey& key) {
  certs::BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key.native()) != 1) {
    throw std::runtime_error("testenv pki: " + certs::opensslError("write the public key"));
  }
  return certs::bioContents(bio.get());
}

}  // namespace

PkiFiles writePki(const std::filesystem::path& dir) {
  PkiFiles files{dir / "ca.crt", dir / "apiserver.crt", dir / "apiserver.key",
                 dir / "service-account.key", dir / "service-account.pub"};
  const auto ca = newCa("shardscaler-testenv-ca");
  // The in-cluster names and the first service IP (10.0.0.1) too, so a client that follows
  // the in-cluster conventions verifies the same certificate.
  const auto serving =
      issue(ca, leaf("kube-apiserver",
                     {"127.0.0.1", "localhost", "10.0.0.1", "kubernetes", "kubernetes.default",
                      "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}));
  const auto sa_key = orThrow(certs::PrivateKey::generateP256(), "generate service-account key");
  writeFileAtomically(files.ca_cert, ca.certificate().pem());
  writeFileAtomically(files.serving_cert, serving.certificate.pem());
  writePrivateFile(files.serving_key, serving.key.pem());
  writePrivateFile(files.service_account_key, sa_key.pem());
  writeFileAtomically(files.service_account_pubkey, publicKeyPem(sa_key));
  return files;
}

ServingPki writeServingPki(const std::filesystem::path& dir, const std::string& name) {
  ServingPki files{dir / (name + "-ca.crt"), dir / (name + ".crt"), dir / (name + ".key")};
  const auto ca = newCa(name + "-ca");
  const auto serving = issue(ca, leaf(name, {"127.0.0.1", "localhost"}));
  writeFileAtomically(files.ca_cert, ca.certificate().pem());
  writeFileAtomically(files.serving_cert, serving.certificate.pem());
  writePrivateFile(files.serving_key, serving.key.pem());
  return files;
}

FrontProxyPki writeFrontProxyPki(const std::filesystem::path& dir) {
  FrontProxyPki files{dir / "front-proxy-ca.crt", dir / "front-proxy-client.crt",
                      dir / "front-proxy-client.key"};
  const auto ca = newCa("front-proxy-ca");
  const auto client = issue(ca, leaf(kFrontProxyClientName, {}, certs::CertificateUsage::Client));
  writeFileAtomically(files.ca_cert, ca.certificate().pem());
  writeFileAtomically(files.client_cert, client.certificate.pem());
  writePrivateFile(files.client_key, client.key.pem());
  return files;
}

}  // namespace shardscaler::testenv::control_plane_detail
