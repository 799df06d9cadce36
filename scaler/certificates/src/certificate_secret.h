// Reading and writing the certificate Secret (kubernetes.io/tls keys plus ca.crt and ca.key, and
// two annotations). Private to the serving component; it never drops keys it does not own.
#pragma once

#include <memory>
#include <string>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_plan.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::certificates::detail {

inline constexpr const char* kTlsCertKey = "tls.crt";
inline constexpr const char* kTlsKeyKey = "tls.key";
inline constexpr const char* kCaCertKey = "ca.crt";
inline constexpr const char* kCaKeyKey = "ca.key";

// Parses what the Secret holds; whatever is missing or garbage is left empty, with the reason.
StoredCertificates decodeCertificateSecret(const k8s::Json& secret);

// The Secret's certificate, key and bundle as a server presents them, or why they cannot be.
Expected<std::shared_ptr<const ServingCertificate>> servingCertificateFromSecret(
    const k8s::Json& secret);

// Writes `data` into `secret` (data keys and annotations), leaving everything else as it is.
void encodeCertificateSecret(k8s::Json& secret, const CertificateSecretData& data);

// A new Secret of type kubernetes.io/tls (without data).
k8s::Json newCertificateSecret(const std::string& ns, const std::string& name,
                               const std::map<std::string, std::string>& labels);

}  // namespace shardscaler::certificates::detail
