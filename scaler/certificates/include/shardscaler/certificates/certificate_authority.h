// A self-signed CA that issues ECDSA P-256 serving (and client) certificates, with OpenSSL 3.
// Pure: times come from the caller (who reads a Clock); it never reads the system clock or files.
#pragma once

#include <string>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/x509.h"

namespace shardscaler::certificates {

enum class CertificateUsage {
  Server,  // extendedKeyUsage serverAuth; hosts become SANs
  Client,  // extendedKeyUsage clientAuth; organizations become the subject's O (Kubernetes groups)
};

struct LeafCertificateSpec {
  std::string common_name;
  // DNS names and IP address literals, all put into the subjectAltName (TLS clients check only
  // those). Required for Server; optional for Client.
  std::vector<std::string> hosts;
  std::vector<std::string> organizations;
  CertificateUsage usage = CertificateUsage::Server;
  SystemTime not_before;
  SystemTime not_after;
};

class CertificateAuthority {
 public:
  // A new CA with a fresh P-256 key, valid [not_before, not_after].
  static Expected<CertificateAuthority> generate(const std::string& common_name,
                                                 SystemTime not_before, SystemTime not_after);
  // Loads a CA: the certificate must be a CA and the key its private half.
  static Expected<CertificateAuthority> fromPem(std::string_view certificate_pem,
                                                std::string_view key_pem);
  // Wraps a CA certificate and key already checked by the caller (see fromPem for the checks).
  static Expected<CertificateAuthority> fromParts(Certificate certificate, PrivateKey key);

  // Issues a leaf certificate with a fresh P-256 key, signed by this CA. Hosts that are neither
  // an IP address nor a DNS name (empty, spaces, commas...) are an error naming the host.
  Expected<KeyedCertificate> issue(const LeafCertificateSpec& spec) const;

  const Certificate& certificate() const { return certificate_; }
  const PrivateKey& key() const { return key_; }

 private:
  CertificateAuthority(Certificate certificate, PrivateKey key)
      : certificate_(std::move(certificate)), key_(std::move(key)) {}

  Certificate certificate_;
  PrivateKey key_;
};

// Checks that `host` can go into a SAN: an IP literal, or a DNS name of letters, digits, '-' and
// '.' (with an optional leading "*."), at most 253 characters. The error names the host.
Expected<void> validateHost(std::string_view host);

}  // namespace shardscaler::certificates
