// CA generation and issuance (SANs, validity, usages), checked with OpenSSL's own chain
// verification; PEM round trips and clear errors for bad PEM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <chrono>

#include "shardscaler/certificates/certificate_authority.h"
#include "shardscaler/certificates/certificate_source.h"

namespace shardscaler::certificates {
namespace {

using std::chrono::hours;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const SystemTime kNow = std::chrono::sys_days{std::chrono::year{2030} / 3 / 1} + hours(12);

CertificateAuthority makeCa(const std::string& name = "test-ca") {
  auto ca = CertificateAuthority::generate(name, kNow - hours(1), kNow + hours(24 * 365));
  EXPECT_TRUE(ca.has_value()) << ca.error();
  return std::move(*ca);
}

// OpenSSL's verdict on `leaf` against `trusted` at `at` for `purpose` ("sslserver"/"sslclient").
int verify(const Certificate& leaf, const std::vector<Certificate>& trusted, SystemTime at,
           const char* purpose = "sslserver") {
  X509_STORE* store = X509_STORE_new();
  for (const auto& ca : trusted) X509_STORE_add_cert(store, ca.native());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf.native(), nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
  X509_VERIFY_PARAM_set_time(param, std::chrono::system_clock::to_time_t(at));
  X509_VERIFY_PARAM_set_purpose(
      param, X509_PURPOSE_get_id(X509_PURPOSE_get0(X509_PURPOSE_get_by_sname(purpose))));
  const int ok = X509_verify_cert(ctx);
  const int error = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return error;
}

TEST(CertificateAuthority, GeneratesASelfSignedCaWithTheGivenValidity) {
  const auto ca = makeCa("shardscaler-ca");
  const Certificate& cert = ca.certificate();
  EXPECT_TRUE(cert.isCa());
  EXPECT_EQ(cert.subjectCommonName(), "shardscaler-ca");
  EXPECT_EQ(cert.issuerCommonName(), "shardscaler-ca");
  EXPECT_TRUE(cert.isIssuedBy(cert));
  EXPECT_EQ(cert.notBefore(), kNow - hours(1));
  EXPECT_EQ(cert.notAfter(), kNow + hours(24 * 365));
  EXPECT_TRUE(ca.key().matches(cert));
}

TEST(CertificateAuthority, IssuesAServingCertificateWithDnsAndIpSans) {
  const auto ca = makeCa();
  auto issued = ca.issue({.common_name = "shardscaler",
                          .hosts = {"shardscaler.monitoring.svc", "127.0.0.1", "::1"},
                          .not_before = kNow - hours(1),
                          .not_after = kNow + hours(10)});
  ASSERT_TRUE(issued.has_value()) << issued.error();
  const Certificate& leaf = issued->certificate;
  EXPECT_FALSE(leaf.isCa());
  EXPECT_THAT(leaf.dnsNames(), ElementsAre("shardscaler.monitoring.svc"));
  EXPECT_THAT(leaf.ipAddresses(), UnorderedElementsAre("127.0.0.1", "::1"));
  EXPECT_TRUE(leaf.covers("shardscaler.monitoring.svc"));
  EXPECT_TRUE(leaf.covers("SHARDSCALER.monitoring.svc"));
  EXPECT_TRUE(leaf.covers("127.0.0.1"));
  EXPECT_TRUE(leaf.covers("::1"));
  EXPECT_FALSE(leaf.covers("shardscaler"));  // the CN alone never counts
  EXPECT_FALSE(leaf.covers("10.0.0.1"));
  EXPECT_EQ(leaf.notAfter(), kNow + hours(10));
  EXPECT_TRUE(leaf.isIssuedBy(ca.certificate()));
  EXPECT_TRUE(issued->key.matches(leaf));
  EXPECT_FALSE(ca.key().matches(leaf));
}

TEST(CertificateAuthority, ChainVerifiesWithOpenSslOnlyWithinValidityAndForItsPurpose) {
  const auto ca = makeCa();
  const auto other = makeCa("other-ca");
  auto issued = ca.issue({.common_name = "s",
                          .hosts = {"s.ns.svc"},
                          .not_before = kNow,
                          .not_after = kNow + hours(2)});
  ASSERT_TRUE(issued.has_value()) << issued.error();
  const Certificate& leaf = issued->certificate;
  EXPECT_EQ(verify(leaf, {ca.certificate()}, kNow + hours(1)), X509_V_OK);
  EXPECT_EQ(verify(leaf, {other.certificate()}, kNow + hours(1)),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  EXPECT_EQ(verify(leaf, {other.certificate(), ca.certificate()}, kNow + hours(1)), X509_V_OK);
  EXPECT_EQ(verify(leaf, {ca.certificate()}, kNow + hours(3)), X509_V_ERR_CERT_HAS_EXPIRED);
  EXPECT_EQ(verify(leaf, {ca.certificate()}, kNow - hours(1)), X509_V_ERR_CERT_NOT_YET_VALID);
  EXPECT_EQ(verify(leaf, {ca.certificate()}, kNow + hours(1), "sslclient"),
            X509_V_ERR_INVALID_PURPOSE);
  EXPECT_FALSE(leaf.isIssuedBy(other.certificate()));
}

TEST(CertificateAuthority, IssuesClientCertificatesWithGroups) {
  const auto ca = makeCa();
  auto issued = ca.issue({.common_name = "front-proxy-client",
                          .organizations = {"system:masters", "team-a"},
                          .usage = CertificateUsage::Client,
                          .not_before = kNow,
                          .not_after = kNow + hours(1)});
  ASSERT_TRUE(issued.has_value()) << issued.error();
  EXPECT_EQ(issued->certificate.subjectCommonName(), "front-proxy-client");
  EXPECT_THAT(issued->certificate.subjectOrganizations(), ElementsAre("system:masters", "team-a"));
  EXPECT_EQ(verify(issued->certificate, {ca.certificate()}, kNow, "sslclient"), X509_V_OK);
  EXPECT_EQ(verify(issued->certificate, {ca.certificate()}, kNow, "sslserver"),
            X509_V_ERR_INVALID_PURPOSE);
}

TEST(CertificateAuthority, RejectsHostsThatAreNoDnsNameNorIp) {
  const auto ca = makeCa();
  for (const std::string bad : {"", "a,DNS:evil", "has space", "a..b", ".lead", "x/y"}) {
    auto issued = ca.issue({.common_name = "s",
                            .hosts = {"ok.svc", bad},
                            .not_before = kNow,
                            .not_after = kNow + hours(1)});
    ASSERT_FALSE(issued.has_value()) << bad;
    EXPECT_THAT(issued.error(), HasSubstr("host \"" + bad + "\"")) << issued.error();
  }
  auto none = ca.issue({.common_name = "s", .not_before = kNow, .not_after = kNow + hours(1)});
  ASSERT_FALSE(none.has_value());
  EXPECT_THAT(none.error(), HasSubstr("at least one host"));
  auto backwards =
      ca.issue({.common_name = "s", .hosts = {"a"}, .not_before = kNow, .not_after = kNow});
  ASSERT_FALSE(backwards.has_value());
  EXPECT_THAT(backwards.error(), HasSubstr("notAfter"));
  EXPECT_TRUE(validateHost("*.ns.svc").has_value());
}

TEST(CertificateAuthority, PemRoundTripsKeepIdentityAndKeys) {
  const auto ca = makeCa();
  auto again = CertificateAuthority::fromPem(ca.certificate().pem(), ca.key().pem());
  ASSERT_TRUE(again.has_value()) << again.error();
  EXPECT_EQ(again->certificate(), ca.certificate());
  EXPECT_EQ(again->certificate().fingerprint(), ca.certificate().fingerprint());
  EXPECT_EQ(again->certificate().fingerprint().size(), 64U);
  EXPECT_TRUE(again->key().matches(ca.certificate()));
  EXPECT_THAT(ca.key().pem(), HasSubstr("-----BEGIN PRIVATE KEY-----"));

  auto issued = again->issue(
      {.common_name = "s", .hosts = {"a.b"}, .not_before = kNow, .not_after = kNow + hours(1)});
  ASSERT_TRUE(issued.has_value());
  EXPECT_TRUE(issued->certificate.isIssuedBy(ca.certificate()));

  const auto other = makeCa("other");
  auto bundle = Certificate::allFromPem("leading text\n" + ca.certificate().pem() +
                                        other.certificate().pem());
  ASSERT_TRUE(bundle.has_value()) << bundle.error();
  ASSERT_EQ(bundle->size(), 2U);
  EXPECT_EQ((*bundle)[1].subjectCommonName(), "other");
  EXPECT_EQ(concatPem(*bundle), ca.certificate().pem() + other.certificate().pem());
}

TEST(CertificateAuthority, BadPemGivesClearErrors) {
  EXPECT_EQ(Certificate::fromPem("").error(), "no PEM certificate found");
  EXPECT_EQ(Certificate::fromPem("hello").error(), "no PEM certificate found");
  EXPECT_EQ(Certificate::allFromPem("garbage").error(), "no PEM certificate found");
  auto corrupt = Certificate::fromPem(
      "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
  ASSERT_FALSE(corrupt.has_value());
  EXPECT_THAT(corrupt.error(), HasSubstr("certificate does not parse"));

  const auto ca = makeCa();
  auto second_bad = Certificate::allFromPem(
      ca.certificate().pem() + "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n");
  ASSERT_FALSE(second_bad.has_value());
  EXPECT_THAT(second_bad.error(), HasSubstr("certificate 2 does not parse"));

  EXPECT_EQ(PrivateKey::fromPem("nope").error(), "no PEM private key found");
  auto bad_key =
      PrivateKey::fromPem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
  ASSERT_FALSE(bad_key.has_value());
  EXPECT_THAT(bad_key.error(), HasSubstr("private key does not parse"));

  const auto other = makeCa("other");
  auto mismatched = CertificateAuthority::fromPem(ca.certificate().pem(), other.key().pem());
  ASSERT_FALSE(mismatched.has_value());
  EXPECT_THAT(mismatched.error(), HasSubstr("does not belong to CA \"test-ca\""));

  auto issued = ca.issue(
      {.common_name = "leaf", .hosts = {"a"}, .not_before = kNow, .not_after = kNow + hours(1)});
  ASSERT_TRUE(issued.has_value());
  auto not_ca = CertificateAuthority::fromPem(issued->certificate.pem(), issued->key.pem());
  ASSERT_FALSE(not_ca.has_value());
  EXPECT_THAT(not_ca.error(), HasSubstr("\"leaf\" is not a CA"));
}

TEST(ServingCertificate, ChecksThatTheKeyBelongsAndNamesThePartAtFault) {
  const auto ca = makeCa();
  auto issued = ca.issue(
      {.common_name = "leaf", .hosts = {"a"}, .not_before = kNow, .not_after = kNow + hours(1)});
  ASSERT_TRUE(issued.has_value());
  auto good = ServingCertificate::fromPem(issued->certificate.pem(), issued->key.pem(),
                                          ca.certificate().pem());
  ASSERT_TRUE(good.has_value()) << good.error();
  EXPECT_EQ((*good)->leaf(), issued->certificate);
  ASSERT_EQ((*good)->caBundle().size(), 1U);

  EXPECT_THAT(ServingCertificate::fromPem(issued->certificate.pem(), ca.key().pem()).error(),
              HasSubstr("the key does not belong to certificate \"leaf\""));
  EXPECT_THAT(ServingCertificate::fromPem("x", issued->key.pem()).error(),
              HasSubstr("certificate: no PEM certificate found"));
  EXPECT_THAT(ServingCertificate::fromPem(issued->certificate.pem(), "").error(),
              HasSubstr("key: no PEM private key found"));
  EXPECT_THAT(
      ServingCertificate::fromPem(issued->certificate.pem(), issued->key.pem(), "junk").error(),
      HasSubstr("CA bundle: no PEM certificate found"));
}

}  // namespace
}  // namespace shardscaler::certificates
