// How shardscaler learns the user its requests arrive as: client certificate, TokenReview, basic
// auth, or a clear refusal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <filesystem>
#include <fstream>

#include "guard_fixtures.h"
#include "shardscaler/guard/self_identity.h"

namespace shardscaler::guard {
namespace {

using namespace testing;
using ::testing::HasSubstr;

// A self-signed certificate with the subject entries given ("CN", "O", ...), as PEM.
std::string certificatePem(const std::vector<std::pair<std::string, std::string>>& subject) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& [field, value] : subject) {
    X509_NAME_add_entry_by_txt(name, field.c_str(), MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
  }
  X509_set_issuer_name(cert, name);
  X509_set_pubkey(cert, key);
  X509_sign(cert, key, EVP_sha256());
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(length));
  BIO_free(bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return pem;
}

TEST(SelfIdentity, ClientCertificateSubjectIsUserAndGroups) {
  FakeKubeClient client;
  k8s::KubeConfig config;
  config.client_cert_data =
      certificatePem({{"O", "system:masters"}, {"O", "shardscaler"}, {"CN", "shardscaler-admin"}});
  config.token = "ignored: the API server tries the certificate first";
  auto identity = discoverSelfIdentity(client, config);
  ASSERT_TRUE(identity) << identity.error().message;
  EXPECT_EQ(identity->username, "shardscaler-admin");
  EXPECT_EQ(identity->groups, (std::vector<std::string>{"system:masters", "shardscaler"}));
  EXPECT_EQ(identity->source, "client certificate");
  EXPECT_TRUE(client.created.empty());
}

TEST(SelfIdentity, CertificateFileIsRead) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("guard-cert-" + std::to_string(::getpid()) + ".pem");
  std::ofstream(path) << certificatePem({{"CN", "from-file"}});
  FakeKubeClient client;
  k8s::KubeConfig config;
  config.client_cert_file = path.string();
  auto identity = discoverSelfIdentity(client, config);
  std::filesystem::remove(path);
  ASSERT_TRUE(identity) << identity.error().message;
  EXPECT_EQ(identity->username, "from-file");

  config.client_cert_file = "/nonexistent/cert.pem";
  EXPECT_EQ(discoverSelfIdentity(client, config).error().message,
            "cannot read the client certificate file /nonexistent/cert.pem");
}

TEST(SelfIdentity, CertificateWithoutCommonNameOrGarbageIsAnError) {
  EXPECT_EQ(identityFromCertificatePem(certificatePem({{"O", "only-a-group"}})).error(),
            "the client certificate's subject has no common name (CN)");
  EXPECT_EQ(identityFromCertificatePem("-----BEGIN CERTIFICATE-----\nxx\n").error(),
            "the client certificate is not a PEM certificate");
}

TEST(SelfIdentity, TokenIsReviewedByTheApiServer) {
  FakeKubeClient client;
  client.create_answer = Json::parse(R"({"apiVersion":"authentication.k8s.io/v1",
      "kind":"TokenReview","status":{"authenticated":true,
      "user":{"username":"system:serviceaccount:monitoring:shardscaler","uid":"u1",
              "groups":["system:serviceaccounts","system:serviceaccounts:monitoring",
                        "system:authenticated"]}}})");
  k8s::KubeConfig config;
  config.token = "secret-token";
  auto identity = discoverSelfIdentity(client, config);
  ASSERT_TRUE(identity) << identity.error().message;
  EXPECT_EQ(identity->username, "system:serviceaccount:monitoring:shardscaler");
  EXPECT_EQ(identity->groups.size(), 3u);
  EXPECT_EQ(identity->source, "TokenReview");
  ASSERT_EQ(client.created.size(), 1u);
  EXPECT_EQ(client.created[0]["spec"]["token"], "secret-token");
  EXPECT_EQ(client.created[0]["kind"], "TokenReview");
}

TEST(SelfIdentity, TokenFileIsTrimmedAndReviewed) {
  const auto path =
      std::filesystem::temp_directory_path() / ("guard-token-" + std::to_string(::getpid()));
  std::ofstream(path) << "  file-token\n";
  FakeKubeClient client;
  client.create_answer =
      Json::parse(R"({"status":{"authenticated":true,"user":{"username":"me"}}})");
  k8s::KubeConfig config;
  config.token_file = path.string();
  auto identity = discoverSelfIdentity(client, config);
  std::filesystem::remove(path);
  ASSERT_TRUE(identity) << identity.error().message;
  EXPECT_EQ(client.created.at(0)["spec"]["token"], "file-token");
}

TEST(SelfIdentity, RefusedOrUnauthenticatedReviewSaysWhatToDo) {
  FakeKubeClient client;
  k8s::KubeConfig config;
  config.token = "t";
  client.create_answer = std::unexpected(k8s::Error{.kind = k8s::ErrorKind::Forbidden,
                                                    .http_status = 403,
                                                    .message = "cannot create tokenreviews"});
  auto identity = discoverSelfIdentity(client, config);
  ASSERT_FALSE(identity);
  EXPECT_THAT(identity.error().message,
              HasSubstr("the TokenReview of shardscaler's own token failed "
                        "(Forbidden (403): cannot create tokenreviews)"));
  EXPECT_THAT(identity.error().message, HasSubstr("--guard-self-user"));
  EXPECT_FALSE(identity.error().retryable);

  client.create_answer =
      Json::parse(R"({"status":{"authenticated":false,"error":"token expired"}})");
  EXPECT_THAT(discoverSelfIdentity(client, config).error().message,
              HasSubstr("is not authenticated (token expired)"));
  client.create_answer = Json::parse(R"({"status":{"authenticated":true,"user":{}}})");
  EXPECT_THAT(discoverSelfIdentity(client, config).error().message, HasSubstr("named no user"));
}

TEST(SelfIdentity, NoAnswerFromTheApiServerMayBeRetried) {
  FakeKubeClient client;
  k8s::KubeConfig config;
  config.token = "t";
  for (auto kind : {k8s::ErrorKind::Transport, k8s::ErrorKind::Timeout, k8s::ErrorKind::ServerError,
                    k8s::ErrorKind::TooManyRequests}) {
    client.create_answer = std::unexpected(k8s::Error{.kind = kind, .message = "later"});
    auto identity = discoverSelfIdentity(client, config);
    ASSERT_FALSE(identity);
    EXPECT_TRUE(identity.error().retryable) << k8s::toString(kind);
  }
}

TEST(SelfIdentity, BasicAuthUserOrNothing) {
  FakeKubeClient client;
  k8s::KubeConfig config;
  config.origin = "kubeconfig \"/k\" context \"c\"";
  config.username = "bob";
  auto identity = discoverSelfIdentity(client, config);
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->username, "bob");
  config.username = "";
  EXPECT_EQ(discoverSelfIdentity(client, config).error().message,
            "shardscaler's credentials (kubeconfig \"/k\" context \"c\") have no client "
            "certificate, token or user name to learn its identity from; name its user with "
            "--guard-self-user");
}

}  // namespace
}  // namespace shardscaler::guard
