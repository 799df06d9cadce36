// X.509 certificates and private keys as immutable values, PEM in and PEM out, over OpenSSL 3.
// Must never log key material nor hand out a private key other than to the code that owns it.
#pragma once

#include <openssl/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>
#include "shardscaler/base/expected.h"

namespace shardscaler::certificates {

using SystemTime = std::chrono::system_clock::time_point;

// One certificate. Copies share the same OpenSSL object, which is never modified.
class Certificate {
 public:
  // The first certificate in `pem`; anything before it is ignored. The error says what is wrong
  // ("no PEM certificate in tls.crt" style, with OpenSSL's reason when it has one).
  static Expected<Certificate> fromPem(std::string_view pem);
  // Every certificate in `pem`, in order. Fails when there is none or when one does not parse.
  static Expected<std::vector<Certificate>> allFromPem(std::string_view pem);
  // Takes over one reference of `x509` (X509_up_ref'ed by the caller when shared).
  static Certificate adopt(X509* x509);

  std::string pem() const;
  std::string subjectCommonName() const;
  std::vector<std::string> subjectOrganizations() const;
  std::string issuerCommonName() const;
  SystemTime notBefore() const;
  SystemTime notAfter() const;
  // Subject alternative names; Go's TLS clients (the API server) check only these, never the CN.
  std::vector<std::string> dnsNames() const;
  std::vector<std::string> ipAddresses() const;  // "127.0.0.1", "::1"
  bool isCa() const;                             // basicConstraints CA:TRUE
  // SHA-256 of the DER encoding, lower-case hex: a certificate's identity.
  std::string fingerprint() const;
  // True when `ca` names this certificate's issuer and its key verifies the signature.
  bool isIssuedBy(const Certificate& ca) const;
  // True when a SAN matches `host`: an IP address against the IP SANs, a DNS name against the DNS
  // SANs (case-insensitive, "*." matching one left-most label), as a TLS client checks it.
  bool covers(std::string_view host) const;

  X509* native() const { return x509_.get(); }

  friend bool operator==(const Certificate& a, const Certificate& b);

 private:
  explicit Certificate(std::shared_ptr<X509> x509) : x509_(std::move(x509)) {}
  std::shared_ptr<X509> x509_;
};

// A private key (ECDSA P-256 when generated here; any key OpenSSL reads when loaded).
class PrivateKey {
 public:
  static Expected<PrivateKey> generateP256();
  // PKCS#8 ("PRIVATE KEY"), SEC1 ("EC PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY"), unencrypted.
  static Expected<PrivateKey> fromPem(std::string_view pem);

  std::string pem() const;  // unencrypted PKCS#8
  // True when this is the private half of `certificate`'s public key.
  bool matches(const Certificate& certificate) const;

  EVP_PKEY* native() const { return key_.get(); }

 private:
  explicit PrivateKey(std::shared_ptr<EVP_PKEY> key) : key_(std::move(key)) {}
  std::shared_ptr<EVP_PKEY> key_;
};

// A certificate with its private key, e.g. a serving certificate as a server presents it.
struct KeyedCertificate {
  Certificate certificate;
  PrivateKey key;
};

// True when `host` is an IPv4 or IPv6 address literal (it then goes into an IP SAN).
bool isIpAddress(std::string_view host);

// The PEM of several certificates, concatenated in order.
std::string concatPem(const std::vector<Certificate>& certificates);

}  // namespace shardscaler::certificates
