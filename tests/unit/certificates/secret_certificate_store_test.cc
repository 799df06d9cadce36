// SecretCertificateStore against an in-memory API (one class under test; the real API server is in
// tests/integration/serving_*): create when missing, races between replicas, garbage replaced,
// failures that keep the last good certificate, and a long run of rotations with two replicas in
// which no client ever sees a certificate its bundle does not verify.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/x509_vfy.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "shardscaler/certificates/secret_certificate_store.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "tls_test_support.h"

namespace shardscaler::certificates {
namespace secret_certificate_store_test {
namespace {

using k8s::testing::FakeKubeClient;
using k8s::testing::statusError;
using k8s::testing::Verb;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

const SystemTime kT0 = std::chrono::sys_days{std::chrono::year{2031} / 6 / 1};
const k8s::Resource kSecrets = k8s::resources::secrets();

RotationPolicy shortPolicy() {
  return RotationPolicy{.serving_validity = seconds(60),
                        .ca_validity = seconds(200),
                        .rotate_at = 2.0 / 3.0,
                        .bundle_propagation = seconds(5),
                        .backdate = seconds(0)};
}

struct Version {
  SystemTime written;
  Certificate leaf;
  std::vector<Certificate> bundle;
};

Version versionOf(const k8s::Json& secret, SystemTime written) {
  auto leaf = Certificate::fromPem(
      k8s::base64Decode(secret["data"]["tls.crt"].get<std::string>()).value_or(""));
  auto bundle = Certificate::allFromPem(
      k8s::base64Decode(secret["data"]["ca.crt"].get<std::string>()).value_or(""));
  EXPECT_TRUE(leaf.has_value() && bundle.has_value());
  return Version{written, *leaf, *bundle};
}

bool verifies(const Certificate& leaf, const std::vector<Certificate>& bundle, SystemTime at) {
  X509_STORE* store = X509_STORE_new();
  for (const auto& ca : bundle) X509_STORE_add_cert(store, ca.native());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf.native(), nullptr);
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx),
                             std::chrono::system_clock::to_time_t(at));
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

class SecretCertificateStoreTest : public ::testing::Test {
 protected:
  SecretCertificateStoreOptions options(std::vector<std::string> hosts = {"guard.mon.svc",
                                                                          "127.0.0.1"}) {
    SecretCertificateStoreOptions o;
    o.secret_namespace = "mon";
    o.secret_name = "guard-tls";
    o.hosts = std::move(hosts);
    o.rotation = shortPolicy();
    o.poll_period = seconds(5);
    o.retry_period = seconds(1);
    o.degraded = [this](std::string_view reason) {
      std::lock_guard lock(mutex_);
      degraded_.insert(std::string(reason));
    };
    return o;
  }
  k8s::Json secret() { return client_.find(kSecrets, "mon", "guard-tls").value(); }
  bool degraded(const std::string& reason) {
    std::lock_guard lock(mutex_);
    return degraded_.contains(reason);
  }
  std::string fingerprint(const CertificateSource& source) {
    const auto current = source.current();
    return current ? current->leaf().fingerprint() : std::string();
  }

  std::shared_ptr<k8s::ManualClock> clock_ = std::make_shared<k8s::ManualClock>(kT0);
  FakeKubeClient client_;
  std::mutex mutex_;
  std::set<std::string> degraded_;
};

TEST_F(SecretCertificateStoreTest, CreatesTheSecretWhenMissingAndServesIt) {
  SecretCertificateStore store(client_, clock_, options());
  EXPECT_EQ(store.current(), nullptr);
  ASSERT_TRUE(store.sync().has_value());
  const auto s = secret();
  EXPECT_EQ(s["type"], "kubernetes.io/tls");
  EXPECT_EQ(s["metadata"]["labels"]["app.kubernetes.io/managed-by"], "shardscaler");
  EXPECT_EQ(s["metadata"]["annotations"]["shardscaler.io/ca-published-at"], "2031-06-01T00:00:00Z");
  for (const char* key : {"tls.crt", "tls.key", "ca.crt", "ca.key"}) {
    EXPECT_NE(k8s::base64Decode(s["data"][key].get<std::string>()).value_or(""), "") << key;
  }
  const auto current = store.current();
  ASSERT_NE(current, nullptr);
  EXPECT_TRUE(current->leaf().covers("guard.mon.svc"));
  EXPECT_TRUE(current->leaf().covers("127.0.0.1"));
  ASSERT_EQ(current->caBundle().size(), 1U);
  EXPECT_TRUE(current->leaf().isIssuedBy(current->caBundle().front()));
  EXPECT_EQ(current->leaf().notAfter(), kT0 + seconds(60));
  EXPECT_EQ(client_.writes().size(), 1U);

  ASSERT_TRUE(store.sync().has_value());
  EXPECT_EQ(client_.writes().size(), 1U) << "nothing was due: no write";
}

TEST_F(SecretCertificateStoreTest, ASecondReplicaLoadsTheSameSecret) {
  SecretCertificateStore first(client_, clock_, options());
  SecretCertificateStore second(client_, clock_, options());
  ASSERT_TRUE(first.sync().has_value());
  ASSERT_TRUE(second.sync().has_value());
  EXPECT_EQ(fingerprint(first), fingerprint(second));
  EXPECT_EQ(client_.writes().size(), 1U);
}

TEST_F(SecretCertificateStoreTest, LosingTheCreateRaceLoadsTheWinnersSecret) {
  // The winner wrote its Secret into another API first; it appears here just before our create.
  FakeKubeClient elsewhere;
  SecretCertificateStore winner(elsewhere, clock_, options());
  ASSERT_TRUE(winner.sync().has_value());
  const auto theirs = elsewhere.find(kSecrets, "mon", "guard-tls").value();
  client_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb == Verb::Create && !client_.find(kSecrets, "mon", "guard-tls")) {
      client_.put(kSecrets, theirs);
    }
  });
  SecretCertificateStore loser(client_, clock_, options());
  ASSERT_TRUE(loser.sync().has_value());
  EXPECT_EQ(fingerprint(loser), fingerprint(winner));
  EXPECT_EQ(client_.writes().size(), 0U);
}

TEST_F(SecretCertificateStoreTest, GarbageIsReplacedAndWhatIsNotOursIsKept) {
  client_.put(
      kSecrets,
      {{"apiVersion", "v1"},
       {"kind", "Secret"},
       {"type", "Opaque"},
       {"metadata",
        {{"name", "guard-tls"}, {"namespace", "mon"}, {"annotations", {{"team", "platform"}}}}},
       {"data",
        {{"tls.crt", k8s::base64Encode("garbage")},
         {"tls.key", "not base64!"},
         {"ca.crt", k8s::base64Encode("-----BEGIN CERTIFICATE-----\nxx")},
         {"keep.me", k8s::base64Encode("yes")}}}});
  SecretCertificateStore store(client_, clock_, options());
  ASSERT_TRUE(store.sync().has_value());
  const auto s = secret();
  EXPECT_EQ(s["type"], "Opaque");
  EXPECT_EQ(s["data"]["keep.me"], k8s::base64Encode("yes"));
  EXPECT_EQ(s["metadata"]["annotations"]["team"], "platform");
  ASSERT_NE(store.current(), nullptr);
  EXPECT_EQ(store.current()->leaf().fingerprint(), versionOf(s, kT0).leaf.fingerprint());
  EXPECT_EQ(client_.writes().size(), 1U);  // the repair (put() is the test's own write)
}

TEST_F(SecretCertificateStoreTest, AConflictingWriteIsReReadAndPlannedAgain) {
  SecretCertificateStore store(client_, clock_, options());
  ASSERT_TRUE(store.sync().has_value());
  clock_->advance(seconds(40));  // the serving certificate is due
  int updates = 0;
  client_.setBeforeCall([&](const k8s::testing::Call& call) {
    // Another replica writes in between our read and our write (a label, nothing to redo).
    if (call.verb == Verb::Update && updates++ == 0) {
      auto s = secret();
      s["metadata"]["labels"]["touched"] = "yes";
      client_.put(kSecrets, s);
    }
  });
  ASSERT_TRUE(store.sync().has_value());
  EXPECT_EQ(updates, 2);
  const auto s = secret();
  EXPECT_EQ(s["metadata"]["labels"]["touched"], "yes");
  EXPECT_EQ(store.current()->leaf().notAfter(), kT0 + seconds(100));
}

TEST_F(SecretCertificateStoreTest, AFailedWriteKeepsTheLastGoodCertificate) {
  SecretCertificateStore store(client_, clock_, options());
  ASSERT_TRUE(store.sync().has_value());
  const std::string good = fingerprint(store);
  auto s = secret();
  s["data"]["tls.crt"] = k8s::base64Encode("garbage");
  client_.put(kSecrets, s);
  client_.failNext({.verb = Verb::Update}, 1, statusError(403, "cannot update secrets"));
  auto result = store.sync();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("Forbidden"));
  EXPECT_EQ(fingerprint(store), good);
  EXPECT_TRUE(degraded("certificate_secret_write_failed"));
  EXPECT_TRUE(degraded("certificate_secret_unusable"));

  client_.failNext({}, 1, statusError(500, "etcd is down"));
  result = store.sync();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("etcd is down"));
  EXPECT_TRUE(degraded("certificate_secret_read_failed"));
  EXPECT_EQ(fingerprint(store), good);
}

TEST_F(SecretCertificateStoreTest, ReplicasThatWantDifferentHostsConverge) {
  SecretCertificateStore a(client_, clock_, options({"a.mon.svc"}));
  SecretCertificateStore b(client_, clock_, options({"b.mon.svc"}));
  ASSERT_TRUE(a.sync().has_value());
  ASSERT_TRUE(b.sync().has_value());
  ASSERT_TRUE(a.sync().has_value());
  ASSERT_TRUE(b.sync().has_value());
  EXPECT_EQ(client_.writes().size(), 2U);
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_THAT(b.current()->leaf().dnsNames(), UnorderedElementsAre("a.mon.svc", "b.mon.svc"));
}

TEST_F(SecretCertificateStoreTest, ListenersHearOfEveryNewCertificate) {
  SecretCertificateStore store(client_, clock_, options());
  std::atomic<int> heard{0};
  const auto id = store.addListener([&] { ++heard; });
  ASSERT_TRUE(store.sync().has_value());
  ASSERT_TRUE(store.sync().has_value());
  EXPECT_EQ(heard, 1);
  clock_->advance(seconds(40));
  ASSERT_TRUE(store.sync().has_value());
  EXPECT_EQ(heard, 2);
  store.removeListener(id);
  clock_->advance(seconds(40));
  ASSERT_TRUE(store.sync().has_value());
  EXPECT_EQ(heard, 2);
}

// Two replicas re-read at different rates through several CA lifetimes. Every version's certificate
// must verify against the bundles clients may still hold (those written less than the propagation
// time before it, and the last one before that), and older certificates still valid must verify
// against each new bundle; no replica ever serves an expired certificate.
TEST_F(SecretCertificateStoreTest, RotationsNeverLeaveAClientUnableToVerify) {
  SecretCertificateStore a(client_, clock_, options());
  SecretCertificateStore b(client_, clock_, options());
  const auto propagation = shortPolicy().bundle_propagation;
  std::vector<Version> versions;
  std::size_t seen = 0;
  for (int step = 0; step < 900; ++step) {
    ASSERT_TRUE(a.sync().has_value()) << "step " << step;
    if (step % 3 == 0) {
      ASSERT_TRUE(b.sync().has_value()) << "step " << step;
    }
    const auto writes = client_.writes({.resource = "secrets", .name = "guard-tls"});
    for (; seen < writes.size(); ++seen)
      versions.push_back(versionOf(writes[seen].body, clock_->now()));
    for (const auto* store : {&a, &b}) {
      ASSERT_NE(store->current(), nullptr);
      ASSERT_LT(clock_->now(), store->current()->leaf().notAfter()) << "step " << step;
    }
    clock_->advance(seconds(1));
  }

  std::set<std::string> cas;
  for (std::size_t k = 0; k < versions.size(); ++k) {
    const Version& v = versions[k];
    cas.insert(v.bundle.front().fingerprint());
    EXPECT_TRUE(verifies(v.leaf, v.bundle, v.written)) << "version " << k;
    bool older_window_seen = false;
    for (std::size_t j = k; j-- > 0;) {
      const Version& old = versions[j];
      // Clients hold a bundle written less than the propagation time ago, or the last one
      // written before that.
      const bool in_window = old.written > v.written - propagation;
      if (!in_window && older_window_seen) break;
      if (!in_window) older_window_seen = true;
      EXPECT_TRUE(verifies(v.leaf, old.bundle, v.written))
          << "version " << k << "'s certificate against version " << j << "'s bundle";
      if (old.leaf.notAfter() > v.written) {
        EXPECT_TRUE(verifies(old.leaf, v.bundle, v.written))
            << "version " << j << "'s certificate against version " << k << "'s bundle";
      }
    }
  }
  EXPECT_GE(cas.size(), 5U) << "several CA changes were exercised";
  EXPECT_LT(versions.size(), 120U) << "no write storm";
}

TEST_F(SecretCertificateStoreTest, TheBackgroundLoopWakesWhenSomethingComesDue) {
  auto o = options();
  o.poll_period = std::chrono::hours(1);
  SecretCertificateStore store(client_, clock_, o);
  store.start();
  const auto first_wait = clock_->awaitNextDeadline(std::chrono::seconds(10));
  ASSERT_TRUE(first_wait.has_value());
  const std::string before = fingerprint(store);
  ASSERT_FALSE(before.empty());
  // The serving certificate is due at 40 s, long before the hourly poll.
  EXPECT_EQ(*first_wait - clock_->monotonicNow(), seconds(40));
  clock_->advance(seconds(40));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fingerprint(store) == before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(fingerprint(store), before);
  store.stop();
}

TEST_F(SecretCertificateStoreTest, TheBackgroundLoopRetriesSoonThenBacksOff) {
  // A replica started while the API server fails: the guard must not wait a whole retry period
  // (found by the soak: a 5 s wait after one injected 500 kept a paused target waiting).
  auto o = options();
  o.retry_period = std::chrono::milliseconds(900);
  client_.failNext({}, 4, statusError(500, "etcd is down"));
  SecretCertificateStore store(client_, clock_, o);
  store.start();
  std::vector<std::chrono::nanoseconds> waits;
  for (int round = 0; round < 4; ++round) {
    const auto deadline = clock_->awaitNextDeadline(std::chrono::seconds(10));
    ASSERT_TRUE(deadline.has_value()) << "round " << round;
    waits.push_back(*deadline - clock_->monotonicNow());
    EXPECT_EQ(fingerprint(store), "") << "round " << round;
    clock_->advance(waits.back());
  }
  EXPECT_THAT(waits, ElementsAre(std::chrono::milliseconds(250), std::chrono::milliseconds(500),
                                 std::chrono::milliseconds(900), std::chrono::milliseconds(900)));
  // The fifth round reads and creates the Secret; the certificate is served.
  EXPECT_TRUE(
      test_kit::eventually(std::chrono::seconds(10), [&] { return !fingerprint(store).empty(); }));
  store.stop();
}

TEST(SecretCertificateStoreOptions, NamesTheSettingAtFault) {
  SecretCertificateStoreOptions o;
  EXPECT_THAT(validate(o).error(), HasSubstr("namespace and a name"));
  o.secret_namespace = "mon";
  o.secret_name = "tls";
  EXPECT_THAT(validate(o).error(), HasSubstr("at least one host"));
  o.hosts = {"ok.svc", "bad host"};
  EXPECT_THAT(validate(o).error(), HasSubstr("serving hosts: host \"bad host\""));
  o.hosts = {"ok.svc"};
  EXPECT_TRUE(validate(o).has_value());
  o.rotation.rotate_at = 0;
  EXPECT_THAT(validate(o).error(), HasSubstr("rotation fraction"));
}

}  // namespace
}  // namespace secret_certificate_store_test
}  // namespace shardscaler::certificates
