// The rotation planner: what is created, rotated and retired at which moment, and the rule that
// keeps an old CA in the bundle while a certificate it signed may still be served.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "shardscaler/certificates/certificate_plan.h"

namespace shardscaler::certificates {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const SystemTime kT0 = std::chrono::sys_days{std::chrono::year{2031} / 1 / 1};
const std::vector<std::string> kHosts = {"guard.monitoring.svc", "127.0.0.1"};

RotationPolicy testPolicy() {
  return RotationPolicy{.serving_validity = seconds(90),
                        .ca_validity = seconds(300),
                        .rotate_at = 2.0 / 3.0,
                        .bundle_propagation = seconds(10),
                        .backdate = seconds(0)};
}

CertificateAuthority makeCa(SystemTime from, seconds validity, const std::string& name) {
  auto ca = CertificateAuthority::generate(name, from, from + validity);
  EXPECT_TRUE(ca.has_value()) << ca.error();
  return std::move(*ca);
}

KeyedCertificate makeLeaf(const CertificateAuthority& ca, SystemTime from,
                          seconds validity = seconds(90),
                          const std::vector<std::string>& hosts = kHosts) {
  auto leaf = ca.issue(
      {.common_name = "serving", .hosts = hosts, .not_before = from, .not_after = from + validity});
  EXPECT_TRUE(leaf.has_value()) << leaf.error();
  return std::move(*leaf);
}

struct State {
  std::optional<CertificateAuthority> signer;
  std::vector<Certificate> older;  // after the signer in the bundle
  std::optional<KeyedCertificate> leaf;
  std::optional<SystemTime> published;
  std::optional<SystemTime> needed_until;

  StoredCertificates stored() const {
    StoredCertificates s;
    s.signing_ca = signer;
    if (signer) s.bundle.push_back(signer->certificate());
    s.bundle.insert(s.bundle.end(), older.begin(), older.end());
    if (!signer) s.ca_problem = "ca.key is missing";
    s.serving = leaf;
    if (!leaf) s.serving_problem = "tls.crt is missing";
    s.ca_published_at = published;
    s.old_cas_needed_until = needed_until;
    return s;
  }
};

CertificatePlan plan(const State& state, SystemTime now) {
  return planCertificates(state.stored(), kHosts, testPolicy(), now);
}

std::string reasons(const CertificatePlan& p) {
  std::string text;
  for (const auto& r : p.reasons) text += r + "\n";
  return text;
}

TEST(CertificatePlan, AnEmptySecretGetsACaAndAServingCertificate) {
  const auto p = plan(State{}, kT0);
  EXPECT_TRUE(p.write);
  EXPECT_TRUE(p.new_ca);
  EXPECT_TRUE(p.issue_serving);
  EXPECT_THAT(p.serving_hosts, ElementsAre("guard.monitoring.svc", "127.0.0.1"));
  EXPECT_THAT(p.old_cas, IsEmpty());
  EXPECT_EQ(p.ca_published_at, kT0);
  EXPECT_EQ(p.old_cas_needed_until, std::nullopt);
  EXPECT_THAT(reasons(p), HasSubstr("ca.key is missing"));
  EXPECT_THAT(reasons(p), HasSubstr("tls.crt is missing"));
}

TEST(CertificatePlan, TheServingCertificateRotatesAtTwoThirdsOfItsLifeFromTheSameCa) {
  const auto ca = makeCa(kT0, seconds(300), "ca-0");
  const State state{ca, {}, makeLeaf(ca, kT0), kT0, std::nullopt};

  const auto early = plan(state, kT0 + seconds(59));
  EXPECT_FALSE(early.write) << reasons(early);
  EXPECT_EQ(early.review_at, kT0 + seconds(60));

  const auto due = plan(state, kT0 + seconds(60));
  EXPECT_TRUE(due.write);
  EXPECT_TRUE(due.issue_serving);
  EXPECT_FALSE(due.new_ca);
  EXPECT_THAT(due.old_cas, IsEmpty());
  EXPECT_EQ(due.ca_published_at, kT0);
  EXPECT_THAT(reasons(due), HasSubstr("is due for rotation since 2031-01-01T00:01:00Z"));
}

TEST(CertificatePlan, ACaDueForRotationIsPublishedBeforeItSignsWhatIsServed) {
  // CA 0..300 s retires at min(2/3 of 300, 300 - 90) = 200 s.
  const auto ca0 = makeCa(kT0, seconds(300), "ca-0");
  const auto leaf0 = makeLeaf(ca0, kT0 + seconds(180));
  const State before{ca0, {}, leaf0, kT0, std::nullopt};
  EXPECT_FALSE(plan(before, kT0 + seconds(199)).write);
  EXPECT_EQ(plan(before, kT0 + seconds(199)).review_at, kT0 + seconds(200));

  // Phase 1: a new CA joins the bundle; the served certificate stays, and so does its CA.
  const auto phase1 = plan(before, kT0 + seconds(200));
  EXPECT_TRUE(phase1.write);
  EXPECT_TRUE(phase1.new_ca);
  EXPECT_FALSE(phase1.issue_serving);
  EXPECT_THAT(phase1.old_cas, ElementsAre(ca0.certificate()));
  EXPECT_EQ(phase1.ca_published_at, kT0 + seconds(200));
  EXPECT_THAT(reasons(phase1), HasSubstr("CA \"ca-0\""));

  // Phase 2: once the new CA has been published for the propagation time, it signs.
  const auto ca1 = makeCa(kT0 + seconds(200), seconds(300), "ca-1");
  const State published{ca1, {ca0.certificate()}, leaf0, kT0 + seconds(200), std::nullopt};
  const auto waiting = plan(published, kT0 + seconds(209));
  EXPECT_FALSE(waiting.write) << reasons(waiting);
  EXPECT_EQ(waiting.review_at, kT0 + seconds(210));
  const auto phase2 = plan(published, kT0 + seconds(210));
  EXPECT_TRUE(phase2.issue_serving);
  EXPECT_FALSE(phase2.new_ca);
  // The replaced certificate may still be served until it expires: its CA stays until then.
  EXPECT_THAT(phase2.old_cas, ElementsAre(ca0.certificate()));
  EXPECT_EQ(phase2.old_cas_needed_until, leaf0.certificate.notAfter());

  // Phase 3: the old CA leaves the bundle when nothing it signed can be served any more.
  const auto leaf1 = makeLeaf(ca1, kT0 + seconds(215));  // due at 275 s
  const State switched{ca1, {ca0.certificate()}, leaf1, kT0 + seconds(200), kT0 + seconds(270)};
  const auto keep = plan(switched, kT0 + seconds(269));
  EXPECT_FALSE(keep.write) << reasons(keep);
  EXPECT_EQ(keep.review_at, kT0 + seconds(270));
  const auto drop = plan(switched, kT0 + seconds(270));
  EXPECT_TRUE(drop.write);
  EXPECT_FALSE(drop.issue_serving);
  EXPECT_FALSE(drop.new_ca);
  EXPECT_THAT(drop.old_cas, IsEmpty());
  EXPECT_EQ(drop.old_cas_needed_until, std::nullopt);
  EXPECT_THAT(reasons(drop), HasSubstr("signs nothing that may still be served"));
}

TEST(CertificatePlan, ACaTooShortLivedForAFullServingCertificateIsReplaced) {
  // rotate_at 0.9 would wait until 270 s; with 90 s serving validity it must go at 210 s.
  auto policy = testPolicy();
  policy.rotate_at = 0.9;
  const auto ca = makeCa(kT0, seconds(300), "ca");
  const State state{ca, {}, makeLeaf(ca, kT0 + seconds(200)), kT0, std::nullopt};
  EXPECT_FALSE(planCertificates(state.stored(), kHosts, policy, kT0 + seconds(209)).new_ca);
  EXPECT_TRUE(planCertificates(state.stored(), kHosts, policy, kT0 + seconds(210)).new_ca);
}

TEST(CertificatePlan, AnOldCaWithoutARecordedEndStaysUntilItExpires) {
  const auto old_ca = makeCa(kT0, seconds(300), "old");
  const auto ca = makeCa(kT0 + seconds(100), seconds(600), "current");
  const State state{ca,
                    {old_ca.certificate()},
                    makeLeaf(ca, kT0 + seconds(100)),
                    kT0 + seconds(100),
                    std::nullopt};
  const auto keep = plan(state, kT0 + seconds(150));
  EXPECT_FALSE(keep.write) << reasons(keep);
  EXPECT_THAT(keep.old_cas, ElementsAre(old_ca.certificate()));
  const auto expired = plan(state, kT0 + seconds(300));
  EXPECT_TRUE(expired.write);
  EXPECT_THAT(expired.old_cas, IsEmpty());
  EXPECT_THAT(reasons(expired), HasSubstr("expired at"));
}

TEST(CertificatePlan, GarbageOrWrongServingCertificatesAreReissuedAtOnce) {
  const auto ca = makeCa(kT0, seconds(300), "ca");
  const auto stranger = makeCa(kT0, seconds(300), "stranger");

  const State garbage{ca, {}, std::nullopt, kT0, std::nullopt};
  auto p = plan(garbage, kT0 + seconds(1));
  EXPECT_TRUE(p.issue_serving);
  EXPECT_FALSE(p.new_ca);
  EXPECT_THAT(reasons(p), HasSubstr("no usable serving certificate (tls.crt is missing)"));

  const State foreign{ca, {}, makeLeaf(stranger, kT0), kT0, std::nullopt};
  p = plan(foreign, kT0 + seconds(1));
  EXPECT_TRUE(p.issue_serving);
  EXPECT_THAT(reasons(p), HasSubstr("not signed by a CA of the bundle"));

  const State expired{ca, {}, makeLeaf(ca, kT0, seconds(30)), kT0, std::nullopt};
  p = plan(expired, kT0 + seconds(30));
  EXPECT_TRUE(p.issue_serving);
  EXPECT_THAT(reasons(p), HasSubstr("expired at 2031-01-01T00:00:30Z"));
}

TEST(CertificatePlan, MissingHostsAreAddedToThoseAlreadyCovered) {
  const auto ca = makeCa(kT0, seconds(300), "ca");
  const State narrow{
      ca, {}, makeLeaf(ca, kT0, seconds(90), {"other.svc", "127.0.0.1"}), kT0, std::nullopt};
  const auto p = plan(narrow, kT0 + seconds(1));
  EXPECT_TRUE(p.issue_serving);
  EXPECT_THAT(reasons(p), HasSubstr("does not cover guard.monitoring.svc"));
  EXPECT_THAT(p.serving_hosts,
              UnorderedElementsAre("guard.monitoring.svc", "127.0.0.1", "other.svc"));
}

TEST(CertificatePlan, ALostCaKeyStartsACaChangeWithoutBreakingWhatIsServed) {
  const auto ca = makeCa(kT0, seconds(300), "ca");
  State state{std::nullopt, {ca.certificate()}, makeLeaf(ca, kT0), kT0, std::nullopt};
  const auto p = plan(state, kT0 + seconds(5));
  EXPECT_TRUE(p.new_ca);
  EXPECT_FALSE(p.issue_serving);
  EXPECT_THAT(p.old_cas, ElementsAre(ca.certificate()));
}

TEST(CertificatePlan, AnExpiredCertificateIsReplacedEvenWhileANewCaPropagates) {
  const auto ca0 = makeCa(kT0, seconds(300), "ca-0");
  const auto ca1 = makeCa(kT0 + seconds(200), seconds(300), "ca-1");
  const State state{ca1,
                    {ca0.certificate()},
                    makeLeaf(ca0, kT0 + seconds(100), seconds(101)),
                    kT0 + seconds(200),
                    std::nullopt};
  const auto p = plan(state, kT0 + seconds(201));
  EXPECT_TRUE(p.issue_serving);
  EXPECT_THAT(reasons(p), HasSubstr("expired"));
}

TEST(CertificatePlan, AMissingPublicationTimeIsCountedFromNow) {
  const auto ca0 = makeCa(kT0, seconds(300), "ca-0");
  const auto ca1 = makeCa(kT0 + seconds(200), seconds(300), "ca-1");
  const State state{
      ca1, {ca0.certificate()}, makeLeaf(ca0, kT0 + seconds(180)), std::nullopt, std::nullopt};
  const auto p = plan(state, kT0 + seconds(230));
  EXPECT_TRUE(p.write);
  EXPECT_FALSE(p.issue_serving);
  EXPECT_EQ(p.ca_published_at, kT0 + seconds(230));
}

TEST(CertificatePlan, CarryingOutAPlanGivesWhatItSays) {
  const auto ca0 = makeCa(kT0, seconds(300), "ca-0");
  const auto leaf0 = makeLeaf(ca0, kT0 + seconds(180));
  const State before{ca0, {}, leaf0, kT0, std::nullopt};
  const auto now = kT0 + seconds(200);
  const auto p = plan(before, now);
  auto data = applyCertificatePlan(p, before.stored(), testPolicy(), {"my-ca", "my-server"}, now);
  ASSERT_TRUE(data.has_value()) << data.error();
  auto bundle = Certificate::allFromPem(data->ca_crt);
  ASSERT_TRUE(bundle.has_value());
  ASSERT_EQ(bundle->size(), 2U);
  EXPECT_EQ((*bundle)[0].subjectCommonName(), "my-ca");
  EXPECT_EQ((*bundle)[0].notAfter(), now + seconds(300));
  EXPECT_EQ((*bundle)[1], ca0.certificate());
  EXPECT_EQ(data->tls_crt, leaf0.certificate.pem());  // not reissued in phase 1
  auto signer = CertificateAuthority::fromPem(data->ca_crt, data->ca_key);
  ASSERT_TRUE(signer.has_value()) << signer.error();
  EXPECT_EQ(data->ca_published_at, now);

  const State fresh{};
  const auto create = plan(fresh, now);
  auto created = applyCertificatePlan(create, fresh.stored(), testPolicy(), {}, now);
  ASSERT_TRUE(created.has_value()) << created.error();
  auto leaf = Certificate::fromPem(created->tls_crt);
  ASSERT_TRUE(leaf.has_value());
  EXPECT_EQ(leaf->subjectCommonName(), "shardscaler-serving");
  EXPECT_TRUE(leaf->covers("guard.monitoring.svc"));
  EXPECT_TRUE(leaf->covers("127.0.0.1"));
  EXPECT_EQ(leaf->notBefore(), now);
  EXPECT_EQ(leaf->notAfter(), now + seconds(90));
}

TEST(RotationPolicy, RejectsSettingsThatWouldRotateAtOnceOrExpireDuringACaChange) {
  EXPECT_TRUE(validate(RotationPolicy{}).has_value());
  EXPECT_TRUE(validate(testPolicy()).has_value());
  auto p = testPolicy();
  p.rotate_at = 1.0;
  EXPECT_THAT(validate(p).error(), HasSubstr("rotation fraction"));
  p = testPolicy();
  p.ca_validity = seconds(100);
  EXPECT_THAT(validate(p).error(), HasSubstr("at least twice"));
  p = testPolicy();
  p.bundle_propagation = seconds(31);  // a third of 90 s is left after rotation
  EXPECT_THAT(validate(p).error(), HasSubstr("bundle propagation"));
  p = testPolicy();
  p.backdate = seconds(200);
  EXPECT_THAT(validate(p).error(), HasSubstr("backdate"));
  p = testPolicy();
  p.serving_validity = seconds(0);
  EXPECT_THAT(validate(p).error(), HasSubstr("positive"));
}

}  // namespace
}  // namespace shardscaler::certificates
