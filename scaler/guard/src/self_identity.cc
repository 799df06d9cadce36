#include "shardscaler/guard/self_identity.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "guard_resources.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::guard {
namespace {

constexpr std::string_view kFix =
    "; grant shardscaler create on tokenreviews.authentication.k8s.io (deploy/rbac does) or name "
    "its user with --guard-self-user";

Expected<std::string> readFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected("cannot read the " + std::string(what) + " file " + path);
  std::stringstream all;
  all << in.rdbuf();
  return all.str();
}

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string entryText(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (length < 0) return {};
  std::string out(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
  OPENSSL_free(utf8);
  return out;
}

std::unexpected<IdentityError> failure(std::string message, bool retryable = false) {
  return std::unexpected(IdentityError{std::move(message), retryable});
}

bool retryable(const k8s::Error& error) {
  using k8s::ErrorKind;
  return error.is(ErrorKind::Transport) || error.is(ErrorKind::Timeout) ||
         error.is(ErrorKind::ServerError) || error.is(ErrorKind::TooManyRequests);
}

std::expected<SelfIdentity, IdentityError> tokenReview(k8s::KubeClient& client,
                                                       const std::string& token) {
  const k8s::Json review = {{"apiVersion", "authentication.k8s.io/v1"},
                            {"kind", "TokenReview"},
                            {"spec", {{"token", token}}}};
  auto answer = client.create(detail::tokenReviews(), "", review);
  if (!answer) {
    return failure("the TokenReview of shardscaler's own token failed (" +
                       answer.error().describe() + ")" + std::string(kFix),
                   retryable(answer.error()));
  }
  const k8s::Json& status = answer->value("status", k8s::Json::object());
  if (!status.is_object() || !status.value("authenticated", false)) {
    const std::string error = status.is_object() ? status.value("error", "") : "";
    return failure("the API server says shardscaler's own token is not authenticated" +
                   (error.empty() ? "" : " (" + error + ")") + std::string(kFix));
  }
  const k8s::Json& user = status.value("user", k8s::Json::object());
  SelfIdentity identity{.source = "TokenReview"};
  if (user.is_object()) {
    if (user.contains("username") && user["username"].is_string()) {
      identity.username = user["username"].get<std::string>();
    }
    if (user.contains("groups") && user["groups"].is_array()) {
      for (const auto& g : user["groups"]) {
        if (g.is_string()) identity.groups.push_back(g.get<std::string>());
      }
    }
  }
  if (identity.username.empty()) {
    return failure("the TokenReview of shardscaler's own token named no user" + std::string(kFix));
  }
  return identity;
}

}  // namespace

Expected<SelfIdentity> identityFromCertificatePem(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  if (!bio) return std::unexpected("out of memory reading the client certificate");
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert) return std::unexpected("the client certificate is not a PEM certificate");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  SelfIdentity identity{.source = "client certificate"};
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) {
    identity.username =
        entryText(X509_NAME_get_entry(subject, i));  // the API server takes the last
  }
  for (int i = X509_NAME_get_index_by_NID(subject, NID_organizationName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_organizationName, i)) {
    identity.groups.push_back(entryText(X509_NAME_get_entry(subject, i)));
  }
  if (identity.username.empty()) {
    return std::unexpected("the client certificate's subject has no common name (CN)");
  }
  return identity;
}

std::expected<SelfIdentity, IdentityError> discoverSelfIdentity(k8s::KubeClient& client,
                                                                const k8s::KubeConfig& config) {
  // The API server tries the client certificate before any token.
  if (!config.client_cert_data.empty() || !config.client_cert_file.empty()) {
    std::string pem = config.client_cert_data;
    if (pem.empty()) {
      auto file = readFile(config.client_cert_file, "client certificate");
      if (!file) return failure(file.error());
      pem = std::move(*file);
    }
    auto identity = identityFromCertificatePem(pem);
    if (!identity) return failure(identity.error());
    return *identity;
  }
  if (!config.token.empty() || !config.token_file.empty()) {
    std::string token = config.token;
    if (token.empty()) {
      auto file = readFile(config.token_file, "token");
      if (!file) return failure(file.error());
      token = trimmed(*file);
    }
    if (token.empty()) return failure("the token file " + config.token_file + " is empty");
    return tokenReview(client, token);
  }
  if (!config.username.empty()) {
    return SelfIdentity{.username = config.username, .source = "basic auth"};
  }
  return failure(
      "shardscaler's credentials (" + config.origin +
      ") have no client certificate, token or user name to learn its identity from; name its "
      "user with --guard-self-user");
}

}  // namespace shardscaler::guard
