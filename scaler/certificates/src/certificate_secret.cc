#include "certificate_secret.h"

#include "shardscaler/api/well_known.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_client/meta_time.h"
#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::certificates::detail {
namespace {

// The decoded value of data[key], or why there is none.
Expected<std::string> dataValue(const k8s::Json& secret, const char* key) {
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return std::unexpected("the Secret has no data");
  const auto value = data->find(key);
  if (value == data->end() || !value->is_string() || value->get_ref<const std::string&>().empty()) {
    return std::unexpected(std::string(key) + " is missing");
  }
  auto decoded = k8s::base64Decode(value->get_ref<const std::string&>());
  if (!decoded) return std::unexpected(std::string(key) + " is not base64");
  return std::move(*decoded);
}

std::optional<SystemTime> annotationTime(const k8s::Json& secret, std::string_view key) {
  const std::string* value = k8s::meta::annotation(secret, key);
  if (value == nullptr) return std::nullopt;
  auto time = k8s::parseMicroTime(*value);
  if (!time) return std::nullopt;
  return *time;
}

void setAnnotation(k8s::Json& secret, std::string_view key, const std::optional<SystemTime>& time) {
  auto& annotations = secret["metadata"]["annotations"];
  if (time) {
    annotations[std::string(key)] = k8s::formatTime(*time);
  } else if (annotations.is_object()) {
    annotations.erase(std::string(key));
  }
  if (annotations.is_null() || annotations.empty()) secret["metadata"].erase("annotations");
}

void decodeServing(const k8s::Json& secret, StoredCertificates& stored) {
  auto cert_pem = dataValue(secret, kTlsCertKey);
  auto key_pem = dataValue(secret, kTlsKeyKey);
  if (!cert_pem || !key_pem) {
    stored.serving_problem = !cert_pem ? cert_pem.error() : key_pem.error();
    return;
  }
  auto certificate = Certificate::fromPem(*cert_pem);
  if (!certificate) {
    stored.serving_problem = std::string(kTlsCertKey) + ": " + certificate.error();
    return;
  }
  auto key = PrivateKey::fromPem(*key_pem);
  if (!key) {
    stored.serving_problem = std::string(kTlsKeyKey) + ": " + key.error();
    return;
  }
  if (!key->matches(*certificate)) {
    stored.serving_problem = "tls.key does not belong to tls.crt";
    return;
  }
  stored.serving = KeyedCertificate{std::move(*certificate), std::move(*key)};
}

void decodeAuthority(const k8s::Json& secret, StoredCertificates& stored) {
  auto bundle_pem = dataValue(secret, kCaCertKey);
  if (!bundle_pem) {
    stored.ca_problem = bundle_pem.error();
    return;
  }
  auto bundle = Certificate::allFromPem(*bundle_pem);
  if (!bundle) {
    stored.ca_problem = std::string(kCaCertKey) + ": " + bundle.error();
    return;
  }
  stored.bundle = std::move(*bundle);
  auto key_pem = dataValue(secret, kCaKeyKey);
  if (!key_pem) {
    stored.ca_problem = key_pem.error();
    return;
  }
  auto key = PrivateKey::fromPem(*key_pem);
  if (!key) {
    stored.ca_problem = std::string(kCaKeyKey) + ": " + key.error();
    return;
  }
  // The CA the key belongs to signs; it leads the bundle even if someone reordered it.
  for (std::size_t i = 0; i < stored.bundle.size(); ++i) {
    if (!key->matches(stored.bundle[i])) continue;
    auto ca = CertificateAuthority::fromParts(stored.bundle[i], *key);
    if (!ca) {
      stored.ca_problem = ca.error();
      return;
    }
    std::rotate(stored.bundle.begin(), stored.bundle.begin() + static_cast<std::ptrdiff_t>(i),
                stored.bundle.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    stored.signing_ca = std::move(*ca);
    return;
  }
  stored.ca_problem = "ca.key belongs to no CA in ca.crt";
}

}  // namespace

StoredCertificates decodeCertificateSecret(const k8s::Json& secret) {
  StoredCertificates stored;
  decodeServing(secret, stored);
  decodeAuthority(secret, stored);
  stored.ca_published_at = annotationTime(secret, api::kCaPublishedAtAnnotation);
  stored.old_cas_needed_until = annotationTime(secret, api::kOldCasNeededUntilAnnotation);
  return stored;
}

Expected<std::shared_ptr<const ServingCertificate>> servingCertificateFromSecret(
    const k8s::Json& secret) {
  auto cert_pem = dataValue(secret, kTlsCertKey);
  if (!cert_pem) return std::unexpected(cert_pem.error());
  auto key_pem = dataValue(secret, kTlsKeyKey);
  if (!key_pem) return std::unexpected(key_pem.error());
  auto bundle_pem = dataValue(secret, kCaCertKey);
  auto certificate = ServingCertificate::fromPem(std::move(*cert_pem), std::move(*key_pem),
                                                 bundle_pem ? std::move(*bundle_pem) : "");
  if (!certificate) return std::unexpected(certificate.error());
  return certificate;
}

void encodeCertificateSecret(k8s::Json& secret, const CertificateSecretData& data) {
  auto& fields = secret["data"];
  if (!fields.is_object()) fields = k8s::Json::object();
  fields[kTlsCertKey] = k8s::base64Encode(data.tls_crt);
  fields[kTlsKeyKey] = k8s::base64Encode(data.tls_key);
  fields[kCaCertKey] = k8s::base64Encode(data.ca_crt);
  fields[kCaKeyKey] = k8s::base64Encode(data.ca_key);
  setAnnotation(secret, api::kCaPublishedAtAnnotation, data.ca_published_at);
  setAnnotation(secret, api::kOldCasNeededUntilAnnotation, data.old_cas_needed_until);
}

k8s::Json newCertificateSecret(const std::string& ns, const std::string& name,
                               const std::map<std::string, std::string>& labels) {
  k8s::Json secret = {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"type", "kubernetes.io/tls"},
                      {"data", k8s::Json::object()}};
  if (!labels.empty()) secret["metadata"]["labels"] = labels;
  return secret;
}

}  // namespace shardscaler::certificates::detail
