#include "shardscaler/certificates/x509.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <array>
#include <cstdio>
#include <ctime>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/openssl_handles.h"

namespace shardscaler::certificates {
namespace {

// No passphrase prompt: an encrypted key is an error, never a read from the terminal.
int noPassphrase(char*, int, int, void*) { return 0; }

SystemTime fromAsn1(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return SystemTime{};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string nameEntry(const X509_NAME* name, int nid) {
  std::string value;
  if (name == nullptr) return value;
  const int index = X509_NAME_get_index_by_NID(name, nid, -1);
  if (index < 0) return value;
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length >= 0) value.assign(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
  OPENSSL_free(utf8);
  return value;
}

std::vector<std::string> subjectAltNames(X509* x509, int type) {
  std::vector<std::string> names;
  GeneralNamesPtr sans(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x509, NID_subject_alt_name, nullptr, nullptr)));
  if (!sans) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans.get(), i);
    if (name->type != type) continue;
    if (type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                         static_cast<size_t>(ASN1_STRING_length(dns)));
    } else if (type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (family == AF_INET6 && ASN1_STRING_length(ip) != 16) continue;
      std::array<char, INET6_ADDRSTRLEN> text{};
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text.data(), text.size()) != nullptr) {
        names.emplace_back(text.data());
      }
    }
  }
  return names;
}

}  // namespace

Expected<Certificate> Certificate::fromPem(std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = memoryBio(pem);
  X509* x509 = bio ? PEM_read_bio_X509(bio.get(), nullptr, noPassphrase, nullptr) : nullptr;
  if (x509 == nullptr) {
    const bool none = ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE;
    if (none) {
      ERR_clear_error();
      return std::unexpected("no PEM certificate found");
    }
    return std::unexpected(opensslError("certificate does not parse"));
  }
  return adopt(x509);
}

Expected<std::vector<Certificate>> Certificate::allFromPem(std::string_view pem) {
  ERR_clear_error();
  BioPtr bio = memoryBio(pem);
  std::vector<Certificate> certificates;
  while (bio) {
    X509* x509 = PEM_read_bio_X509(bio.get(), nullptr, noPassphrase, nullptr);
    if (x509 == nullptr) break;
    certificates.push_back(adopt(x509));
  }
  // Reading stops with "no start line" at the end of the input; any other reason is garbage.
  const unsigned long last = ERR_peek_last_error();
  if (last != 0 && ERR_GET_REASON(last) != PEM_R_NO_START_LINE) {
    return std::unexpected(
        opensslError("certificate " + std::to_string(certificates.size() + 1) + " does not parse"));
  }
  ERR_clear_error();
  if (certificates.empty()) return std::unexpected("no PEM certificate found");
  return certificates;
}

Certificate Certificate::adopt(X509* x509) {
  return Certificate(std::shared_ptr<X509>(x509, X509_free));
}

std::string Certificate::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), x509_.get()) != 1) {
    ERR_clear_error();
    return {};
  }
  return bioContents(bio.get());
}

std::string Certificate::subjectCommonName() const {
  return nameEntry(X509_get_subject_name(x509_.get()), NID_commonName);
}

std::vector<std::string> Certificate::subjectOrganizations() const {
  std::vector<std::string> organizations;
  const X509_NAME* name = X509_get_subject_name(x509_.get());
  for (int i = X509_NAME_get_index_by_NID(name, NID_organizationName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) {
    unsigned char* utf8 = nullptr;
    const int length =
        ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)));
    if (length >= 0) organizations.emplace_back(reinterpret_cast<char*>(utf8), length);
    OPENSSL_free(utf8);
  }
  return organizations;
}

std::string Certificate::issuerCommonName() const {
  return nameEntry(X509_get_issuer_name(x509_.get()), NID_commonName);
}

SystemTime Certificate::notBefore() const { return fromAsn1(X509_get0_notBefore(x509_.get())); }

SystemTime Certificate::notAfter() const { return fromAsn1(X509_get0_notAfter(x509_.get())); }

std::vector<std::string> Certificate::dnsNames() const {
  return subjectAltNames(x509_.get(), GEN_DNS);
}

std::vector<std::string> Certificate::ipAddresses() const {
  return subjectAltNames(x509_.get(), GEN_IPADD);
}

bool Certificate::isCa() const { return (X509_get_extension_flags(x509_.get()) & EXFLAG_CA) != 0; }

std::string Certificate::fingerprint() const {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (X509_digest(x509_.get(), EVP_sha256(), digest.data(), &length) != 1) return {};
  std::string hex;
  hex.reserve(std::size_t{length} * 2);
  for (unsigned int i = 0; i < length; ++i) {
    std::array<char, 3> byte{};
    std::snprintf(byte.data(), byte.size(), "%02x", digest[i]);
    hex += byte.data();
  }
  return hex;
}

bool Certificate::isIssuedBy(const Certificate& ca) const {
  const bool named = X509_check_issued(ca.native(), x509_.get()) == X509_V_OK;
  EVP_PKEY* ca_key = X509_get0_pubkey(ca.native());
  const bool signed_by = named && ca_key != nullptr && X509_verify(x509_.get(), ca_key) == 1;
  ERR_clear_error();
  return signed_by;
}

bool Certificate::covers(std::string_view host) const {
  const std::string name(host);
  int match = 0;
  if (isIpAddress(host)) {
    match = X509_check_ip_asc(x509_.get(), name.c_str(), 0);
  } else {
    // Never the subject CN: Go clients ignore it, so a CN-only match would fail for them.
    match = X509_check_host(
        x509_.get(), name.data(), name.size(),
        X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, nullptr);
  }
  ERR_clear_error();
  return match == 1;
}

bool operator==(const Certificate& a, const Certificate& b) {
  return a.x509_ == b.x509_ || X509_cmp(a.native(), b.native()) == 0;
}

Expected<PrivateKey> PrivateKey::generateP256() {
  ERR_clear_error();
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) return std::unexpected(opensslError("generate ECDSA P-256 key"));
  return PrivateKey(std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free));
}

Expected<PrivateKey> PrivateKey::fromPem(std::string_view pem) {
  // OpenSSL 3's decoders report "unsupported" for text with no key at all; say what it is.
  // (A key may follow other blocks, such as "EC PARAMETERS".)
  if (pem.find("-----BEGIN ") == std::string_view::npos ||
      pem.find("PRIVATE KEY-----") == std::string_view::npos) {
    return std::unexpected("no PEM private key found");
  }
  ERR_clear_error();
  BioPtr bio = memoryBio(pem);
  EVP_PKEY* key =
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, noPassphrase, nullptr) : nullptr;
  if (key == nullptr) {
    return std::unexpected(opensslError("private key does not parse (or is encrypted)"));
  }
  return PrivateKey(std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free));
}

std::string PrivateKey::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    ERR_clear_error();
    return {};
  }
  return bioContents(bio.get());
}

bool PrivateKey::matches(const Certificate& certificate) const {
  const EVP_PKEY* public_key = X509_get0_pubkey(certificate.native());
  const bool same = public_key != nullptr && EVP_PKEY_eq(public_key, key_.get()) == 1;
  ERR_clear_error();
  return same;
}

bool isIpAddress(std::string_view host) {
  const std::string text(host);
  std::array<unsigned char, 16> bytes{};
  return inet_pton(AF_INET, text.c_str(), bytes.data()) == 1 ||
         inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1;
}

std::string concatPem(const std::vector<Certificate>& certificates) {
  std::string pem;
  for (const auto& certificate : certificates) pem += certificate.pem();
  return pem;
}

}  // namespace shardscaler::certificates
