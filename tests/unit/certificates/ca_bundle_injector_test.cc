// caBundle injection: the patch for webhook configurations and APIServices (wildcards, blanks,
// already equal, bad paths), and the injector against an in-memory API (conflicts re-read, a
// missing target named, a changed bundle injected at once by the background loop).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "shardscaler/certificates/ca_bundle_injector.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"
#include "tls_test_support.h"

namespace shardscaler::certificates {
namespace {

using k8s::Json;
using k8s::testing::FakeKubeClient;
using ::testing::HasSubstr;

Json webhookConfiguration(const std::string& first_bundle, bool second_has_bundle) {
  Json second = {{"name", "b.example.io"}, {"clientConfig", {{"url", "https://127.0.0.1:1/b"}}}};
  if (second_has_bundle) second["clientConfig"]["caBundle"] = "T0xE";
  return {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingWebhookConfiguration"},
      {"metadata", {{"name", "guard"}, {"resourceVersion", "7"}}},
      {"webhooks",
       {{{"name", "a.example.io"},
         {"clientConfig",
          {{"service", {{"name", "guard"}, {"namespace", "mon"}}}, {"caBundle", first_bundle}}}},
        second}}};
}

TEST(CaBundlePatch, SetsEveryWebhookThatDiffersWithAResourceVersionPrecondition) {
  const auto target = CaBundleTarget::validatingWebhookConfiguration("guard");
  auto patch = caBundlePatch(webhookConfiguration("", false), target, "TkVX");
  ASSERT_TRUE(patch.has_value()) << patch.error();
  ASSERT_TRUE(patch->has_value());
  EXPECT_EQ(**patch, Json::parse(R"([
    {"op":"replace","path":"/metadata/resourceVersion","value":"7"},
    {"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"TkVX"},
    {"op":"add","path":"/webhooks/1/clientConfig/caBundle","value":"TkVX"}])"));

  auto partly = caBundlePatch(webhookConfiguration("TkVX", true), target, "TkVX");
  ASSERT_TRUE(partly.has_value());
  ASSERT_TRUE(partly->has_value());
  EXPECT_EQ((*partly)->size(), 2U);

  auto equal = webhookConfiguration("TkVX", false);
  equal["webhooks"][1]["clientConfig"]["caBundle"] = "TkVX";
  auto nothing = caBundlePatch(equal, target, "TkVX");
  ASSERT_TRUE(nothing.has_value());
  EXPECT_FALSE(nothing->has_value());
}

TEST(CaBundlePatch, ServesApiServicesAndNamesBadPaths) {
  const Json api_service = {
      {"metadata", {{"name", "v1beta1.external.metrics.k8s.io"}, {"resourceVersion", "3"}}},
      {"spec", {{"group", "external.metrics.k8s.io"}}}};
  auto patch = caBundlePatch(api_service,
                             CaBundleTarget::apiService("v1beta1.external.metrics.k8s.io"), "QQ==");
  ASSERT_TRUE(patch.has_value()) << patch.error();
  ASSERT_TRUE(patch->has_value());
  EXPECT_EQ((**patch)[1], Json::parse(R"({"op":"add","path":"/spec/caBundle","value":"QQ=="})"));

  auto no_spec = caBundlePatch({{"metadata", {{"resourceVersion", "1"}}}},
                               CaBundleTarget::apiService("x"), "QQ==");
  ASSERT_FALSE(no_spec.has_value());
  EXPECT_THAT(no_spec.error(),
              HasSubstr("apiservices.apiregistration.k8s.io/v1 x: /spec is missing"));

  auto not_array = caBundlePatch({{"webhooks", {{"a", 1}}}},
                                 CaBundleTarget::validatingWebhookConfiguration("g"), "QQ==");
  ASSERT_FALSE(not_array.has_value());
  EXPECT_THAT(not_array.error(), HasSubstr("/webhooks is not an array"));

  CaBundleTarget bad{k8s::resources::secrets(), "x", {"spec/caBundle"}};
  EXPECT_THAT(caBundlePatch(api_service, bad, "QQ==").error(), HasSubstr("must start with '/'"));
  bad.paths = {"/webhooks/*"};
  EXPECT_THAT(caBundlePatch(api_service, bad, "QQ==").error(), HasSubstr("ends in a wildcard"));
}

class CaBundleInjectorTest : public ::testing::Test {
 protected:
  void SetUp() override { client_.put(resource_, webhookConfiguration("", false)); }
  std::string bundleAt(int webhook) {
    auto object = client_.find(resource_, "", "guard").value();
    return object["webhooks"][webhook]["clientConfig"].value("caBundle", "");
  }
  CaBundleInjectorOptions options() {
    CaBundleInjectorOptions o;
    o.targets = {target_};
    o.resync_period = std::chrono::hours(1);
    return o;
  }

  const CaBundleTarget target_ = CaBundleTarget::validatingWebhookConfiguration("guard");
  const k8s::Resource resource_ = target_.resource;
  FakeKubeClient client_;
  std::shared_ptr<k8s::ManualClock> clock_ = std::make_shared<k8s::ManualClock>();
  std::shared_ptr<CertificateSlot> slot_ = std::make_shared<CertificateSlot>();
};

TEST_F(CaBundleInjectorTest, InjectsOnceAndThenHasNothingToDo) {
  auto pki = testing::makeTestPki();
  slot_->set(pki.serving);
  CaBundleInjector injector(client_, slot_, clock_, options());
  auto written = injector.injectOnce();
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(*written, 1);
  const std::string expected = k8s::base64Encode(pki.ca.certificate().pem());
  EXPECT_EQ(bundleAt(0), expected);
  EXPECT_EQ(bundleAt(1), expected);
  EXPECT_EQ(injector.injectOnce().value(), 0);
  EXPECT_EQ(client_.writes().size(), 1U);
}

TEST_F(CaBundleInjectorTest, AConflictIsReReadAndAMissingTargetNamed) {
  slot_->set(testing::makeTestPki().serving);
  int patches = 0;
  client_.setBeforeCall([&](const k8s::testing::Call& call) {
    if (call.verb == k8s::testing::Verb::Patch && patches++ == 0) {
      client_.put(resource_, client_.find(resource_, "", "guard").value());  // someone re-applied
    }
  });
  CaBundleInjector injector(client_, slot_, clock_, options());
  EXPECT_EQ(injector.injectOnce().value(), 1);
  EXPECT_EQ(patches, 2);

  auto o = options();
  o.targets.push_back(CaBundleTarget::apiService("v1beta1.external.metrics.k8s.io"));
  std::string reason;
  o.degraded = [&](std::string_view r) { reason = std::string(r); };
  CaBundleInjector missing(client_, slot_, clock_, o);
  auto result = missing.injectOnce();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("apiservices.apiregistration.k8s.io/v1 "
                                        "v1beta1.external.metrics.k8s.io: NotFound"));
  EXPECT_EQ(reason, "ca_bundle_target_missing");
}

TEST(CaBundlePatch, AnApiServiceOfAnotherServerIsNotOurs) {
  const auto target = CaBundleTarget::apiService("v1beta1.external.metrics.k8s.io", "monitoring",
                                                 "shardscaler-metrics-api");
  Json api_service = {{"metadata", {{"resourceVersion", "3"}}},
                      {"spec",
                       {{"service", {{"namespace", "keda"}, {"name", "keda-metrics-apiserver"}}},
                        {"caBundle", "S0VEQQ=="}}}};
  auto foreign = foreignTarget(api_service, target);
  ASSERT_TRUE(foreign.has_value());
  EXPECT_THAT(*foreign, HasSubstr("\"keda\" at /spec/service/namespace"));
  api_service["spec"]["service"] = {{"namespace", "monitoring"}, {"name", "other"}};
  EXPECT_THAT(foreignTarget(api_service, target).value_or(""), HasSubstr("\"other\""));
  api_service["spec"].erase("service");  // served by the API server itself
  EXPECT_THAT(foreignTarget(api_service, target).value_or(""), HasSubstr("nothing at"));
  api_service["spec"]["service"] = {{"namespace", "monitoring"},
                                    {"name", "shardscaler-metrics-api"}};
  EXPECT_EQ(foreignTarget(api_service, target), std::nullopt);
  // Without a Service to check, every object is ours (the webhook configurations).
  EXPECT_EQ(foreignTarget(api_service, CaBundleTarget::apiService("x")), std::nullopt);
}

TEST_F(CaBundleInjectorTest, LeavesAnotherServersApiServiceAloneAndSaysSoOnce) {
  slot_->set(testing::makeTestPki().serving);
  const auto target = CaBundleTarget::apiService("v1beta1.external.metrics.k8s.io", "monitoring",
                                                 "shardscaler-metrics-api");
  Json keda = {{"apiVersion", "apiregistration.k8s.io/v1"},
               {"kind", "APIService"},
               {"metadata", {{"name", "v1beta1.external.metrics.k8s.io"}}},
               {"spec",
                {{"service", {{"namespace", "keda"}, {"name", "keda-metrics-apiserver"}}},
                 {"caBundle", "S0VEQQ=="}}}};
  client_.put(target.resource, keda);
  auto o = options();
  o.targets = {target};
  std::vector<std::string> reasons;
  o.degraded = [&](std::string_view r) { reasons.emplace_back(r); };
  CaBundleInjector injector(client_, slot_, clock_, o);
  EXPECT_EQ(injector.injectOnce().value(), 0);
  EXPECT_EQ(injector.injectOnce().value(), 0);
  EXPECT_EQ(client_.writes().size(), 0U);
  EXPECT_EQ(client_.find(target.resource, "", target.name).value()["spec"]["caBundle"], "S0VEQQ==");
  EXPECT_EQ(reasons, std::vector<std::string>{"ca_bundle_target_foreign"});
  // Pointed at shardscaler: from then on it is injected.
  keda["spec"]["service"] = {{"namespace", "monitoring"}, {"name", "shardscaler-metrics-api"}};
  client_.put(target.resource, keda);
  EXPECT_EQ(injector.injectOnce().value(), 1);
}

TEST_F(CaBundleInjectorTest, NothingIsWrittenWithoutABundle) {
  CaBundleInjector injector(client_, slot_, clock_, options());
  auto result = injector.injectOnce();
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error(), HasSubstr("no certificate loaded yet"));
  EXPECT_EQ(client_.writes().size(), 0U);
}

TEST_F(CaBundleInjectorTest, TheBackgroundLoopInjectsANewBundleAtOnce) {
  auto first = testing::makeTestPki("first-ca");
  slot_->set(first.serving);
  CaBundleInjector injector(client_, slot_, clock_, options());
  injector.start();
  const auto wait_for = [&](const std::string& bundle) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (bundleAt(1) != bundle && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return bundleAt(1) == bundle;
  };
  EXPECT_TRUE(wait_for(k8s::base64Encode(first.ca.certificate().pem())));
  // No time passes: the change itself wakes the injector, long before the hourly resync.
  auto second = testing::makeTestPki("second-ca");
  slot_->set(second.serving);
  EXPECT_TRUE(wait_for(k8s::base64Encode(second.ca.certificate().pem())));
  // Someone blanks it; the periodic re-check puts it back.
  ASSERT_TRUE(clock_->awaitWaiters(1, std::chrono::seconds(10)));
  auto blanked = client_.find(resource_, "", "guard").value();
  blanked["webhooks"][1]["clientConfig"].erase("caBundle");
  client_.put(resource_, blanked);
  clock_->advance(std::chrono::hours(1));
  EXPECT_TRUE(wait_for(k8s::base64Encode(second.ca.certificate().pem())));
  injector.stop();
}

}  // namespace
}  // namespace shardscaler::certificates
