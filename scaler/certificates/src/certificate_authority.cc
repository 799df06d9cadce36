#include "shardscaler/certificates/certificate_authority.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include <array>
#include <cctype>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/openssl_handles.h"

namespace shardscaler::certificates {
namespace {

Expected<void> setSerial(X509* x509) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), bytes.size()) != 1) {
    return std::unexpected(opensslError("random serial number"));
  }
  bytes[0] &= 0x7f;  // serial numbers are positive
  bytes[0] |= 0x01;  // and have no leading zero byte, so always 16 bytes long
  std::unique_ptr<BIGNUM, OpenSslFree<BN_free>> serial(
      BN_bin2bn(bytes.data(), bytes.size(), nullptr));
  if (!serial || BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(x509)) == nullptr) {
    return std::unexpected(opensslError("set serial number"));
  }
  return {};
}

Expected<void> setValidity(X509* x509, SystemTime not_before, SystemTime not_after) {
  if (not_after <= not_before) return std::unexpected("notAfter must be later than notBefore");
  if (ASN1_TIME_set(X509_getm_notBefore(x509), std::chrono::system_clock::to_time_t(not_before)) ==
          nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(x509), std::chrono::system_clock::to_time_t(not_after)) ==
          nullptr) {
    return std::unexpected(opensslError("set validity"));
  }
  return {};
}

Expected<void> addNameEntry(X509_NAME* name, const char* field, const std::string& value) {
  if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                 0) != 1) {
    return std::unexpected(opensslError(std::string("subject ") + field + " \"" + value + "\""));
  }
  return {};
}

// Extensions whose value is a fixed OpenSSL config string (no caller input goes in here).
Expected<void> addExtension(X509* x509, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, x509, nullptr, nullptr, 0);
  ExtensionPtr extension(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!extension || X509_add_ext(x509, extension.get(), -1) != 1) {
    return std::unexpected(opensslError(std::string("extension ") + value));
  }
  return {};
}

// Built from GENERAL_NAMEs rather than a config string, so a host can never inject syntax.
Expected<void> addSubjectAltNames(X509* x509, const std::vector<std::string>& hosts) {
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (!names) return std::unexpected(opensslError("subjectAltName"));
  for (const auto& host : hosts) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (name == nullptr) return std::unexpected(opensslError("subjectAltName"));
    if (isIpAddress(host)) {
      ASN1_OCTET_STRING* ip = a2i_IPADDRESS(host.c_str());
      if (ip == nullptr) {
        GENERAL_NAME_free(name);
        return std::unexpected(opensslError("IP address \"" + host + "\""));
      }
      GENERAL_NAME_set0_value(name, GEN_IPADD, ip);
    } else {
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      if (dns == nullptr || ASN1_STRING_set(dns, host.data(), static_cast<int>(host.size())) != 1) {
        ASN1_IA5STRING_free(dns);
        GENERAL_NAME_free(name);
        return std::unexpected(opensslError("DNS name \"" + host + "\""));
      }
      GENERAL_NAME_set0_value(name, GEN_DNS, dns);
    }
    if (sk_GENERAL_NAME_push(names.get(), name) == 0) {
      GENERAL_NAME_free(name);
      return std::unexpected(opensslError("subjectAltName"));
    }
  }
  if (X509_add1_ext_i2d(x509, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return std::unexpected(opensslError("add subjectAltName"));
  }
  return {};
}

struct Draft {
  const std::string& common_name;
  const std::vector<std::string>& organizations;
  SystemTime not_before;
  SystemTime not_after;
};

// A certificate for `key` with subject, serial and validity set; the issuer is set by the caller.
Expected<X509Ptr> startCertificate(const Draft& draft, EVP_PKEY* key) {
  if (draft.common_name.empty()) return std::unexpected("a certificate needs a common name");
  X509Ptr x509(X509_new());
  if (!x509 || X509_set_version(x509.get(), 2) != 1) {
    return std::unexpected(opensslError("new certificate"));
  }
  if (auto ok = setSerial(x509.get()); !ok) return std::unexpected(ok.error());
  if (auto ok = setValidity(x509.get(), draft.not_before, draft.not_after); !ok) {
    return std::unexpected(ok.error());
  }
  X509_NAME* subject = X509_get_subject_name(x509.get());
  for (const auto& organization : draft.organizations) {
    if (auto ok = addNameEntry(subject, "O", organization); !ok) return std::unexpected(ok.error());
  }
  if (auto ok = addNameEntry(subject, "CN", draft.common_name); !ok) {
    return std::unexpected(ok.error());
  }
  if (X509_set_pubkey(x509.get(), key) != 1) return std::unexpected(opensslError("public key"));
  return x509;
}

Expected<void> addExtensions(X509* x509, X509* issuer,
                             std::initializer_list<std::pair<int, const char*>> extensions) {
  for (const auto& [nid, value] : extensions) {
    if (auto ok = addExtension(x509, issuer, nid, value); !ok) return ok;
  }
  return {};
}

Expected<void> sign(X509* x509, EVP_PKEY* key) {
  if (X509_sign(x509, key, EVP_sha256()) <= 0) return std::unexpected(opensslError("sign"));
  return {};
}

}  // namespace

Expected<void> validateHost(std::string_view host) {
  if (isIpAddress(host)) return {};
  const auto fail = [&](std::string_view why) {
    return std::unexpected("host \"" + std::string(host) + "\" " + std::string(why));
  };
  if (host.empty()) return fail("is empty");
  if (host.size() > 253) return fail("is longer than 253 characters");
  std::string_view rest = host.starts_with("*.") ? host.substr(2) : host;
  if (rest.empty() || rest.front() == '.' || rest.back() == '.' ||
      rest.find("..") != std::string_view::npos) {
    return fail("is not a DNS name (empty label)");
  }
  for (const char c : rest) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '.') {
      return fail("is neither an IP address nor a DNS name (letters, digits, '-', '.')");
    }
  }
  return {};
}

Expected<CertificateAuthority> CertificateAuthority::generate(const std::string& common_name,
                                                              SystemTime not_before,
                                                              SystemTime not_after) {
  auto key = PrivateKey::generateP256();
  if (!key) return std::unexpected(key.error());
  const std::vector<std::string> no_organizations;
  auto x509 =
      startCertificate({common_name, no_organizations, not_before, not_after}, key->native());
  if (!x509) return std::unexpected("CA: " + x509.error());
  X509* cert = x509->get();
  if (X509_set_issuer_name(cert, X509_get_subject_name(cert)) != 1) {
    return std::unexpected(opensslError("CA issuer"));
  }
  auto extended = addExtensions(cert, cert,
                                {{NID_basic_constraints, "critical,CA:TRUE"},
                                 {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                                 {NID_subject_key_identifier, "hash"}});
  if (!extended) return std::unexpected("CA: " + extended.error());
  if (auto ok = sign(cert, key->native()); !ok) return std::unexpected("CA: " + ok.error());
  return CertificateAuthority(Certificate::adopt(x509->release()), std::move(*key));
}

Expected<CertificateAuthority> CertificateAuthority::fromPem(std::string_view certificate_pem,
                                                             std::string_view key_pem) {
  auto certificate = Certificate::fromPem(certificate_pem);
  if (!certificate) return std::unexpected("CA certificate: " + certificate.error());
  auto key = PrivateKey::fromPem(key_pem);
  if (!key) return std::unexpected("CA key: " + key.error());
  return fromParts(std::move(*certificate), std::move(*key));
}

Expected<CertificateAuthority> CertificateAuthority::fromParts(Certificate certificate,
                                                               PrivateKey key) {
  if (!certificate.isCa()) {
    return std::unexpected("certificate \"" + certificate.subjectCommonName() + "\" is not a CA");
  }
  if (!key.matches(certificate)) {
    return std::unexpected("the CA key does not belong to CA \"" + certificate.subjectCommonName() +
                           "\"");
  }
  return CertificateAuthority(std::move(certificate), std::move(key));
}

Expected<KeyedCertificate> CertificateAuthority::issue(const LeafCertificateSpec& spec) const {
  if (spec.usage == CertificateUsage::Server && spec.hosts.empty()) {
    return std::unexpected("a serving certificate needs at least one host");
  }
  for (const auto& host : spec.hosts) {
    if (auto ok = validateHost(host); !ok) return std::unexpected(ok.error());
  }
  auto key = PrivateKey::generateP256();
  if (!key) return std::unexpected(key.error());
  auto x509 = startCertificate(
      {spec.common_name, spec.organizations, spec.not_before, spec.not_after}, key->native());
  if (!x509) return std::unexpected(x509.error());
  X509* cert = x509->get();
  X509* issuer = certificate_.native();
  if (X509_set_issuer_name(cert, X509_get_subject_name(issuer)) != 1) {
    return std::unexpected(opensslError("issuer"));
  }
  const bool server = spec.usage == CertificateUsage::Server;
  // ECDSA keys sign; keyEncipherment belongs to RSA key exchange and is left out.
  auto extended = addExtensions(cert, issuer,
                                {{NID_basic_constraints, "critical,CA:FALSE"},
                                 {NID_key_usage, "critical,digitalSignature"},
                                 {NID_ext_key_usage, server ? "serverAuth" : "clientAuth"},
                                 {NID_subject_key_identifier, "hash"},
                                 {NID_authority_key_identifier, "keyid:always"}});
  if (!extended) return std::unexpected(extended.error());
  if (!spec.hosts.empty()) {
    if (auto ok = addSubjectAltNames(cert, spec.hosts); !ok) return std::unexpected(ok.error());
  }
  if (auto ok = sign(cert, key_.native()); !ok) return std::unexpected(ok.error());
  return KeyedCertificate{Certificate::adopt(x509->release()), std::move(*key)};
}

}  // namespace shardscaler::certificates
