// The external metrics API component against the real API server: shardscaler runs with the args
// and as the identity deploy/overlays/external-metrics gives it (its RBAC applied, its
// ServiceAccount's token), with the guard's webhook configuration as the install's. It registers
// the APIService v1beta1.external.metrics.k8s.io only where none exists:
// - with another server's APIService present (KEDA's), installing the component leaves it in
//   place, and a Warning Event on it says why;
// - where none exists, it creates one naming its own Service, owned by the install's webhook
//   configuration, so that deleting the install deletes it, and it does not come back.
#include <gmock/gmock.h>

#include <chrono>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/deploy_rbac.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::Contains;
using ::testing::HasSubstr;

const k8s::Resource kApiServices{"apiregistration.k8s.io", "v1", "apiservices", false};
const k8s::Resource kWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                           "validatingwebhookconfigurations", false};
constexpr const char* kApiService = "v1beta1.external.metrics.k8s.io";
constexpr const char* kComponent = "overlays/external-metrics";

Json kedaApiService() {
  return Json::parse(R"({
    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
    "metadata": {"name": "v1beta1.external.metrics.k8s.io", "labels": {"app": "keda"}},
    "spec": {"group": "external.metrics.k8s.io", "version": "v1beta1",
             "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
             "service": {"namespace": "keda", "name": "keda-operator-metrics-apiserver",
                         "port": 443}}})");
}

class ExternalMetricsRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    removeApiService();
    ns_ = createNamespace("metrics-api");
    webhook_ = {.configuration = "shardscaler-guard-" + ns_,
                .port = testenv::pickFreePort(),
                .label_key = "e2e.shardscaler.io/metrics-api",
                .label_value = ns_};
    installGuardWebhook(webhook_);
    guardNamespace(webhook_, ns_);
    auto objects = renderedIdentities(kComponent, ns_);
    renameResource(objects, "shardscaler-guard", webhook_.configuration);
    apply(yamlStream(objects));
    kubeconfig_ =
        cluster().writeKubeconfig("shardscaler-" + ns_, serviceAccountToken(ns_, "shardscaler"));
  }

  void TearDown() override {
    if (shardscaler_ && HasFailure()) {
      std::cerr << "---- shardscaler log (tail) ----\n" << shardscaler_->logTail() << "\n";
    }
    shardscaler_.reset();
    removeGuardWebhook(webhook_.configuration);
    removeApiService();
  }

  static void removeApiService() {
    auto removed = adminClient().remove(kApiServices, "", kApiService);
    if (!removed && !removed.error().is(k8s::ErrorKind::NotFound)) {
      FAIL() << removed.error().describe();
    }
    ASSERT_TRUE(test_kit::eventually(60s, kPoll, [](std::string*) {
      return getOrNull(kApiServices, "", kApiService).is_null();
    }));
  }

  // shardscaler as the component runs it: its two flags are the rendered Deployment's.
  void startShardscaler() {
    const auto args = renderedArgs(kComponent);
    for (const char* flag : {"--external-metrics-api=true", "--register-api-service=true"}) {
      ASSERT_THAT(args, Contains(std::string(flag))) << "deploy/" << kComponent;
    }
    std::vector<std::string> extra = guardServingArgs(webhook_, ns_);
    extra.insert(extra.end(), {"--external-metrics-api=true", "--register-api-service=true",
                               "--external-metrics-service=" + ns_ + "/shardscaler-metrics-api"});
    shardscaler_ = std::make_unique<ShardscalerProcess>(
        ShardscalerOptions{.kubeconfig = kubeconfig_,
                           .namespaces = {ns_},
                           .extra_args = std::move(extra),
                           .log_file = testLogDir() / ("shardscaler-" + ns_ + ".log")});
  }

  // The Warning Events about the APIService (they live in "default"): their messages.
  static std::vector<std::string> apiServiceWarnings() {
    auto r = kubectl(
        "get events -n default --field-selector involvedObject.name=" + std::string(kApiService) +
        ",reason=ApiServiceOwnedElsewhere -o jsonpath='{range .items[*]}{.message}{\"\\n\"}{end}'");
    std::vector<std::string> out;
    std::string line;
    for (char c : r.out) {
      if (c == '\n') {
        if (!line.empty()) out.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
    return out;
  }

  std::string ns_;
  GuardWebhook webhook_;
  std::filesystem::path kubeconfig_;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
};

TEST_F(ExternalMetricsRegistrationTest, AnotherServersApiServiceIsLeftInPlaceAndTheReasonSaid) {
  auto created = adminClient().create(kApiServices, "", kedaApiService());
  ASSERT_TRUE(created) << created.error().describe();
  const std::string uid = (*created)["metadata"]["uid"];
  startShardscaler();

  std::string said;
  ASSERT_TRUE(test_kit::eventually(90s, kPoll, [&](std::string* seen) {
    for (const std::string& m : apiServiceWarnings()) {
      if (m.find("keda/keda-operator-metrics-apiserver") != std::string::npos) said = m;
    }
    *seen = "no ApiServiceOwnedElsewhere Event; log: " + shardscaler_->logTail(600);
    return !said.empty();
  })) << "shardscaler never said why it leaves the APIService alone";
  EXPECT_THAT(said, HasSubstr("shardscaler leaves APIService v1beta1.external.metrics.k8s.io in "
                              "place: it names keda/keda-operator-metrics-apiserver, and only "
                              "one server can own external.metrics.k8s.io"));
  EXPECT_THAT(said, HasSubstr(ns_ + "/shardscaler-metrics-api"));
  EXPECT_THAT(shardscaler_->logTail(20000),
              HasSubstr("belongs to keda/keda-operator-metrics-apiserver, not to shardscaler"));
  // Its registration looked and found the group taken: the same object, unchanged.
  ASSERT_TRUE(test_kit::eventually(30s, kPoll, [&](std::string*) {
    return shardscaler_->logTail(20000).find("external metrics API: APIService") !=
           std::string::npos;
  }));
  const Json now = getOrNull(kApiServices, "", kApiService);
  ASSERT_TRUE(now.is_object());
  EXPECT_EQ(now["metadata"]["uid"], uid);
  EXPECT_EQ(now["spec"]["service"], kedaApiService()["spec"]["service"]);
  EXPECT_FALSE(now["spec"].contains("caBundle"));
  EXPECT_EQ(now["metadata"].value("labels", Json::object()).value("app", ""), "keda");
}

TEST_F(ExternalMetricsRegistrationTest, WhereNoneExistsItRegistersOneTheInstallTakesAlong) {
  const Json configuration = getOrNull(kWebhookConfigurations, "", webhook_.configuration);
  ASSERT_TRUE(configuration.is_object());
  startShardscaler();

  Json ours;
  ASSERT_TRUE(test_kit::eventually(90s, kPoll, [&](std::string* seen) {
    ours = getOrNull(kApiServices, "", kApiService);
    *seen = ours.dump() + "; log: " + shardscaler_->logTail(600);
    return ours.is_object() && !ours["spec"].value("caBundle", "").empty();
  })) << "no APIService registered";
  EXPECT_EQ(ours["spec"]["service"],
            Json({{"namespace", ns_}, {"name", "shardscaler-metrics-api"}, {"port", 443}}));
  EXPECT_FALSE(ours["spec"].value("insecureSkipTLSVerify", false));
  const Json& owner = ours["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner.value("kind", ""), "ValidatingWebhookConfiguration");
  EXPECT_EQ(owner.value("name", ""), webhook_.configuration);
  EXPECT_EQ(owner["uid"], configuration["metadata"]["uid"]);

  // Uninstalling deletes the webhook configuration; the garbage collector takes the APIService,
  // and shardscaler, still running, does not register another without its owner.
  removeGuardWebhook(webhook_.configuration);
  ASSERT_TRUE(test_kit::eventually(90s, kPoll, [&](std::string* seen) {
    *seen = getOrNull(kApiServices, "", kApiService).dump();
    return getOrNull(kApiServices, "", kApiService).is_null();
  })) << "the APIService outlived the install";
  ASSERT_TRUE(test_kit::eventually(60s, kPoll, [&](std::string*) {
    return shardscaler_->logTail(20000).find(
               "the install's webhook configuration is missing or being deleted") !=
           std::string::npos;
  }));
  EXPECT_TRUE(getOrNull(kApiServices, "", kApiService).is_null())
      << "registered again after the install was deleted";
}

}  // namespace
}  // namespace shardscaler::e2e
