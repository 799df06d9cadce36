// The certificate Secret and caBundle injection against the real kube-apiserver (1.20): created
// when missing, loaded by another replica, replicas racing to create it, garbage replaced, short
// rotations seen by every replica, and the caBundle of a real ValidatingWebhookConfiguration
// injected, re-injected after someone blanks it, and guarded by a 409 on a stale read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include "serving_test_support.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/ca_bundle_injector.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::certificates::integration {
namespace {

// The waits look every 100 ms, as they did before the kit.
constexpr std::chrono::milliseconds kWaitPoll{100};

using std::chrono::milliseconds;
using std::chrono::seconds;

const k8s::Resource kSecrets = k8s::resources::secrets();
const CaBundleTarget kWebhookTarget = CaBundleTarget::validatingWebhookConfiguration("unused");

class ServingCertificates : public ::testing::Test {
 protected:
  void SetUp() override { ns_ = createTestNamespace("serving"); }
  Json secret() {
    auto got = adminClient().get(kSecrets, ns_, "serving-cert");
    EXPECT_TRUE(got.has_value()) << got.error().describe();
    return got.value_or(Json::object());
  }

  std::shared_ptr<const k8s::Clock> clock_ = std::make_shared<k8s::RealClock>();
  std::string ns_;
};

TEST_F(ServingCertificates, TheSecretIsCreatedWhenMissingAndAnotherReplicaLoadsIt) {
  SecretCertificateStore first(adminClient(), clock_, storeOptions(ns_));
  auto synced = first.sync();
  ASSERT_TRUE(synced.has_value()) << synced.error();
  const Json created = secret();
  EXPECT_EQ(created["type"], "kubernetes.io/tls");
  for (const char* key : {"tls.crt", "tls.key", "ca.crt", "ca.key"}) {
    EXPECT_TRUE(created["data"].contains(key)) << key;
  }
  ASSERT_NE(first.current(), nullptr);
  EXPECT_TRUE(first.current()->leaf().covers("127.0.0.1"));
  EXPECT_TRUE(first.current()->leaf().covers("guard." + ns_ + ".svc"));

  SecretCertificateStore second(adminClient(), clock_, storeOptions(ns_));
  ASSERT_TRUE(second.sync().has_value());
  EXPECT_EQ(fingerprintOf(second), fingerprintOf(first));
  EXPECT_EQ(secret()["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
}

TEST_F(ServingCertificates, ReplicasRacingToCreateTheSecretAllServeTheOneThatWon) {
  std::vector<std::unique_ptr<SecretCertificateStore>> replicas;
  replicas.reserve(3);
  for (int i = 0; i < 3; ++i) {
    replicas.push_back(
        std::make_unique<SecretCertificateStore>(adminClient(), clock_, storeOptions(ns_)));
  }
  std::vector<std::future<Expected<void>>> syncs;
  syncs.reserve(replicas.size());
  for (auto& replica : replicas) {
    syncs.push_back(std::async(std::launch::async, [&] { return replica->sync(); }));
  }
  for (auto& sync : syncs) {
    auto result = sync.get();
    EXPECT_TRUE(result.has_value()) << result.error();
  }
  const std::string won = fingerprintOf(*replicas[0]);
  ASSERT_FALSE(won.empty());
  for (auto& replica : replicas) EXPECT_EQ(fingerprintOf(*replica), won);
}

TEST_F(ServingCertificates, GarbageInTheSecretIsReplacedAndOtherKeysKept) {
  auto created = adminClient().create(
      kSecrets, ns_,
      {{"apiVersion", "v1"},
       {"kind", "Secret"},
       {"type", "kubernetes.io/tls"},
       {"metadata", {{"name", "serving-cert"}}},
       {"stringData", {{"tls.crt", "garbage"}, {"tls.key", "more garbage"}, {"note", "mine"}}}});
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  SecretCertificateStore store(adminClient(), clock_, storeOptions(ns_));
  auto synced = store.sync();
  ASSERT_TRUE(synced.has_value()) << synced.error();
  ASSERT_NE(store.current(), nullptr);
  const Json replaced = secret();
  EXPECT_EQ(replaced["data"]["note"], "bWluZQ==");  // "mine"
  EXPECT_NE(replaced["metadata"]["resourceVersion"], (*created)["metadata"]["resourceVersion"]);

  SecretCertificateStore other(adminClient(), clock_, storeOptions(ns_));
  ASSERT_TRUE(other.sync().has_value());
  EXPECT_EQ(fingerprintOf(other), fingerprintOf(store));
}

TEST_F(ServingCertificates, ShortRotationsUpdateTheSecretAndEveryReplicaSwaps) {
  auto options = storeOptions(ns_);
  options.rotation = secondsPolicy();
  SecretCertificateStore a(adminClient(), clock_, options);
  SecretCertificateStore b(adminClient(), clock_, options);
  a.start();
  b.start();
  std::set<std::string> seen_a, seen_b, cas;
  const auto record = [&] {
    seen_a.insert(fingerprintOf(a));
    seen_b.insert(fingerprintOf(b));
    if (auto current = a.current()) cas.insert(current->caBundle().front().fingerprint());
  };
  // 20 s: the serving certificate rotates at 6 s, a CA change starts at 9 s and switches at 11 s.
  test_kit::eventually(milliseconds(20000), kWaitPoll, [&] {
    record();
    return false;
  });
  // The window may close between one replica's swap and the other's (a few milliseconds apart):
  // keep recording until both serve the same certificate, so each set holds every swap. The
  // comparison is made while both run: a rotation may still land while the first one stops.
  EXPECT_TRUE(test_kit::eventually(seconds(5), kWaitPoll, [&] {
    record();
    return fingerprintOf(a) == fingerprintOf(b);
  })) << "the replicas did not converge on one certificate";
  a.stop();
  b.stop();
  seen_a.erase("");
  seen_b.erase("");
  EXPECT_GE(seen_a.size(), 3U);
  EXPECT_GE(cas.size(), 2U) << "the CA was replaced";
  EXPECT_EQ(seen_a, seen_b) << "both replicas served every certificate";
}

TEST_F(ServingCertificates, TheApiServerAnswers409ToAPatchFromAStaleRead) {
  // What the injector relies on: a replaced resourceVersion is checked as a precondition.
  const auto target = CaBundleTarget::validatingWebhookConfiguration(ns_ + "-stale");
  auto created =
      adminClient().create(target.resource, "",
                           Json::parse(R"({"apiVersion":"admissionregistration.k8s.io/v1",
        "kind":"ValidatingWebhookConfiguration","metadata":{"name":")" +
                                       ns_ + R"(-stale"},
        "webhooks":[{"name":"stale.serving.shardscaler.io","sideEffects":"None",
          "admissionReviewVersions":["v1"],
          "clientConfig":{"url":"https://127.0.0.1:1/validate"},
          "objectSelector":{"matchLabels":{"nothing":"matches"}}}]})"));
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  auto patch = caBundlePatch(*created, target, "Zm9v");
  ASSERT_TRUE(patch.has_value() && patch->has_value());
  Json touched = *created;
  touched["metadata"]["labels"] = {{"touched", "yes"}};
  ASSERT_TRUE(adminClient().update(target.resource, "", touched).has_value());
  auto stale = adminClient().patch(target.resource, "", target.name, k8s::PatchType::Json, **patch);
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().kind, k8s::ErrorKind::Conflict) << stale.error().describe();
  ASSERT_TRUE(adminClient().remove(target.resource, "", target.name).has_value());
}

TEST_F(ServingCertificates, TheCaBundleOfARealWebhookConfigurationIsInjectedAndRestored) {
  const std::string name = ns_ + "-guard";
  const auto target = CaBundleTarget::validatingWebhookConfiguration(name);
  const auto webhook = [&](const std::string& suffix) {
    return Json::parse(R"({"name":")" + suffix + R"(.serving.shardscaler.io",
      "sideEffects":"None","admissionReviewVersions":["v1"],
      "clientConfig":{"url":"https://127.0.0.1:1/)" +
                       suffix + R"("},
      "objectSelector":{"matchLabels":{"nothing":"matches"}}})");
  };
  const Json configuration = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                              {"kind", "ValidatingWebhookConfiguration"},
                              {"metadata", {{"name", name}}},
                              {"webhooks", {webhook("a"), webhook("b")}}};
  ASSERT_TRUE(adminClient().create(target.resource, "", configuration).has_value());

  auto store = std::make_shared<SecretCertificateStore>(adminClient(), clock_, storeOptions(ns_));
  ASSERT_TRUE(store->sync().has_value());
  CaBundleInjectorOptions options;
  options.targets = {target};
  options.resync_period = milliseconds(300);
  CaBundleInjector injector(adminClient(), store, clock_, options);
  auto written = injector.injectOnce();
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(*written, 1);
  EXPECT_EQ(injector.injectOnce().value(), 0) << "already equal: nothing written";

  const auto bundles = [&] {
    std::vector<std::string> values;
    auto object = adminClient().get(target.resource, "", name);
    if (!object) return values;
    for (const auto& w : (*object)["webhooks"])
      values.push_back(w["clientConfig"].value("caBundle", ""));
    return values;
  };
  auto values = bundles();
  ASSERT_EQ(values.size(), 2U);
  EXPECT_FALSE(values[0].empty());
  EXPECT_EQ(values[0], values[1]);

  // Someone re-applies the manifest without a caBundle; the running injector puts it back.
  injector.start();
  auto current = adminClient().get(target.resource, "", name);
  ASSERT_TRUE(current.has_value());
  (*current)["webhooks"][0]["clientConfig"].erase("caBundle");
  (*current)["webhooks"][1]["clientConfig"]["caBundle"] = "";
  ASSERT_TRUE(adminClient().update(target.resource, "", *current).has_value());
  EXPECT_TRUE(test_kit::eventually(seconds(10), kWaitPoll, [&] {
    auto now = bundles();
    return now.size() == 2 && now[0] == values[0] && now[1] == values[0];
  }));
  injector.stop();
  ASSERT_TRUE(adminClient().remove(target.resource, "", name).has_value());
}

}  // namespace
}  // namespace shardscaler::certificates::integration
