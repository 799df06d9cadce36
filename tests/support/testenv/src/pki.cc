#include "pki.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardscaler::testenv::control_plane_detail {
namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using BigNumPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;

[[noreturn]] void fail(const std::string& what) {
  std::string reason;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    reason += std::string(reason.empty() ? "" : "; ") + buf;
  }
  throw std::runtime_error("testenv pki: " + what + (reason.empty() ? "" : ": " + reason));
}

void check(int ok, const std::string& what) {
  if (ok != 1) fail(what);
}

KeyPtr generateRsaKey() {
  KeyPtr key(EVP_RSA_gen(2048));
  if (!key) fail("generate RSA key");
  return key;
}

void addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>> ext(
      X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext) fail("extension " + value);
  check(X509_add_ext(cert, ext.get(), -1), "add extension " + value);
}

struct CertSpec {
  std::string common_name;
  bool is_ca = false;
  std::string subject_alt_names;  // OpenSSL config syntax, e.g. "IP:127.0.0.1,DNS:localhost"
  std::string extended_key_usage = "serverAuth";  // of a leaf certificate
};

// Signs with `issuer_key`; a null issuer means self-signed.
CertPtr makeCertificate(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
  CertPtr cert(X509_new());
  if (!cert) fail("X509_new");
  check(X509_set_version(cert.get(), 2), "set version");
  unsigned char serial_bytes[16];
  check(RAND_bytes(serial_bytes, sizeof serial_bytes), "random serial");
  serial_bytes[0] &= 0x7f;  // positive
  BigNumPtr serial(BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()))) {
    fail("set serial");
  }
  // An hour of back-dating absorbs clock differences; a month outlives any test run.
  if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), 30L * 24 * 3600)) {
    fail("set validity");
  }
  check(X509_set_pubkey(cert.get(), key), "set public key");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                   -1, -1, 0),
        "set common name");
  X509* signer = issuer ? issuer : cert.get();
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)), "set issuer");
  if (spec.is_ca) {
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), signer, NID_key_usage,
                 "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    addExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    addExtension(cert.get(), signer, NID_ext_key_usage, spec.extended_key_usage);
  }
  addExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer) addExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
  if (!spec.subject_alt_names.empty()) {
    addExtension(cert.get(), signer, NID_subject_alt_name, spec.subject_alt_names);
  }
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) <= 0) fail("sign");
  return cert;
}

BioPtr openFile(const std::filesystem::path& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "w"));
  if (!bio) fail("open " + path.string());
  return bio;
}

void writeCert(const std::filesystem::path& path, X509* cert) {
  auto bio = openFile(path);
  check(PEM_write_bio_X509(bio.get(), cert), "write " + path.string());
}

void writePrivateKey(const std::filesystem::path& path, EVP_PKEY* key) {
  auto bio = openFile(path);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr),
        "write " + path.string());
}

void writePublicKey(const std::filesystem::path& path, EVP_PKEY* key) {
  auto bio = openFile(path);
  check(PEM_write_bio_PUBKEY(bio.get(), key), "write " + path.string());
}

}  // namespace

PkiFiles writePki(const std::filesystem::path& dir) {
  PkiFiles files{dir / "ca.crt", dir / "apiserver.crt", dir / "apiserver.key",
                 dir / "service-account.key", dir / "service-account.pub"};
  auto ca_key = generateRsaKey();
  auto ca = makeCertificate({"shardscaler-testenv-ca", true, ""}, ca_key.get(), nullptr, nullptr);
  auto serving_key = generateRsaKey();
  // The in-cluster names and the first service IP (10.0.0.1) too, so a client that follows
  // the in-cluster conventions verifies the same certificate.
  auto serving = makeCertificate({"kube-apiserver", false,
                                  "IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,"
                                  "DNS:kubernetes.default,DNS:kubernetes.default.svc,"
                                  "DNS:kubernetes.default.svc.cluster.local"},
                                 serving_key.get(), ca.get(), ca_key.get());
  auto sa_key = generateRsaKey();
  writeCert(files.ca_cert, ca.get());
  writeCert(files.serving_cert, serving.get());
  writePrivateKey(files.serving_key, serving_key.get());
  writePrivateKey(files.service_account_key, sa_key.get());
  writePublicKey(files.service_account_pubkey, sa_key.get());
  return files;
}

ServingPki writeServingPki(const std::filesystem::path& dir, const std::string& name) {
  ServingPki files{dir / (name + "-ca.crt"), dir / (name + ".crt"), dir / (name + ".key")};
  auto ca_key = generateRsaKey();
  auto ca = makeCertificate({name + "-ca", true, ""}, ca_key.get(), nullptr, nullptr);
  auto serving_key = generateRsaKey();
  auto serving = makeCertificate({name, false, "IP:127.0.0.1,DNS:localhost"}, serving_key.get(),
                                 ca.get(), ca_key.get());
  writeCert(files.ca_cert, ca.get());
  writeCert(files.serving_cert, serving.get());
  writePrivateKey(files.serving_key, serving_key.get());
  return files;
}

FrontProxyPki writeFrontProxyPki(const std::filesystem::path& dir) {
  FrontProxyPki files{dir / "front-proxy-ca.crt", dir / "front-proxy-client.crt",
                      dir / "front-proxy-client.key"};
  auto ca_key = generateRsaKey();
  auto ca = makeCertificate({"front-proxy-ca", true, ""}, ca_key.get(), nullptr, nullptr);
  auto client_key = generateRsaKey();
  auto client = makeCertificate({std::string(kFrontProxyClientName), false, "", "clientAuth"},
                                client_key.get(), ca.get(), ca_key.get());
  writeCert(files.ca_cert, ca.get());
  writeCert(files.client_cert, client.get());
  writePrivateKey(files.client_key, client_key.get());
  return files;
}

}  // namespace shardscaler::testenv::control_plane_detail
