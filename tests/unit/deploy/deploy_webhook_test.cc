// The shard guard as deploy/ installs it: the webhook configuration is the one guard/ expects (so
// the controller's status check finds it enforced once the caBundle is in), its Service reaches
// the port shardscaler serves on, the certificate covers the Service's name, and the opt-in
// PodDisruptionBudget keeps one replica answering through a drain.
#include <gtest/gtest.h>

#include "shardscaler/guard/shard_guard.h"
#include "shardscaler/guard/webhook_configuration.h"
#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

class WebhookTest : public ::testing::TestWithParam<ShardscalerInstall> {
 protected:
  const std::vector<Json>& objects() const { return render(GetParam().dir).objects; }
  Json webhookConfiguration(const ShardscalerPod& p) const {
    auto vwc = find(objects(), "ValidatingWebhookConfiguration", p.options.webhook_configuration);
    EXPECT_TRUE(vwc) << "no ValidatingWebhookConfiguration " << p.options.webhook_configuration
                     << " (--webhook-configuration)";
    return vwc.value_or(Json::object());
  }
};

TEST_P(WebhookTest, ConfigurationIsTheOneTheGuardChecks) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  ASSERT_TRUE(p.options.webhook_bind_address) << "the guard is off";
  Json vwc = webhookConfiguration(p);
  // The three StatefulSet webhooks, then the target webhook.
  ASSERT_EQ(vwc.value("webhooks", Json::array()).size(), 4u);
  // What the API server holds once the caBundle is injected.
  for (Json& hook : vwc["webhooks"]) hook["clientConfig"]["caBundle"] = "Y2E=";
  const Json ns = {{"metadata", {{"labels", {{"kubernetes.io/metadata.name", p.ns}}}}}};
  const guard::GuardStatus status = guard::checkWebhookConfiguration(vwc, ns);
  EXPECT_TRUE(status.enforced) << status.reason;
  // And field by field what guard/ builds (tests create that one), but for where it is served.
  Json expected = guard::webhookConfiguration(p.options.webhook_configuration, {});
  for (size_t i = 0; i < 4; ++i) {
    Json got = vwc["webhooks"][i];
    got.erase("clientConfig");
    got.erase("namespaceSelector");
    Json want = expected["webhooks"][i];
    want.erase("clientConfig");
    EXPECT_EQ(got, want) << "webhook " << i << " of deploy/" << GetParam().dir;
  }
}

TEST_P(WebhookTest, ServiceReachesTheGuardOfThisPod) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  const Json vwc = webhookConfiguration(p);
  for (const Json& hook : vwc["webhooks"]) {
    const Json& ref = hook["clientConfig"]["service"];
    EXPECT_EQ(ref.value("namespace", ""), p.ns);
    EXPECT_EQ(ref.value("path", ""), guard::kGuardPath);
    auto service = find(objects(), "Service", ref.value("name", ""));
    ASSERT_TRUE(service) << "no Service " << ref;
    EXPECT_EQ((*service)["metadata"].value("namespace", ""), p.ns);
    // The selector picks this pod.
    const Json& pod_labels = p.deployment["spec"]["template"]["metadata"]["labels"];
    for (const auto& [key, value] : (*service)["spec"]["selector"].items()) {
      EXPECT_EQ(Json(pod_labels.value(key, "")), value)
          << "the Service selects " << key << "=" << value;
    }
    // Its port leads to the container port shardscaler serves the guard on.
    bool found = false;
    for (const Json& port : (*service)["spec"]["ports"]) {
      if (port.value("port", 0) != ref.value("port", 443)) continue;
      found = true;
      const Json& target = port["targetPort"];
      int64_t container_port = -1;
      for (const Json& cp : p.container.value("ports", Json::array())) {
        if ((target.is_string() && cp.value("name", "") == target.get<std::string>()) ||
            (target.is_number() && cp.value("containerPort", 0) == target.get<int64_t>())) {
          container_port = cp.value("containerPort", 0);
        }
      }
      EXPECT_EQ(container_port, p.options.webhook_bind_address->port)
          << "targetPort " << target << " is not the port of --webhook-bind-address";
    }
    EXPECT_TRUE(found) << "the Service has no port " << ref.value("port", 443);
  }
}

TEST_P(WebhookTest, CertificateCoversTheServiceName) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  const std::string service_name = std::string(app::kWebhookServiceName) + "." + p.ns + ".svc";
  if (p.options.webhook_cert_dir.empty()) {
    const auto& hosts = p.options.webhook_hosts;
    EXPECT_NE(std::ranges::find(hosts, service_name), hosts.end())
        << "--webhook-hosts lacks " << service_name;
    EXPECT_EQ(p.options.webhook_cert_secret_namespace, p.ns);
    return;
  }
  // cert-manager: the mounted Secret is the Certificate's, which covers the name and whose CA
  // the injector puts into the webhook.
  const Json vwc = webhookConfiguration(p);
  const std::string inject = vwc["metadata"]
                                 .value("annotations", Json::object())
                                 .value("cert-manager.io/inject-ca-from", "");
  ASSERT_EQ(inject.find(p.ns + "/"), 0u) << "inject-ca-from " << inject;
  auto certificate = find(objects(), "Certificate", inject.substr(p.ns.size() + 1));
  ASSERT_TRUE(certificate) << "no Certificate " << inject;
  const Json& dns = (*certificate)["spec"]["dnsNames"];
  EXPECT_NE(std::ranges::find(dns, Json(service_name)), dns.end());
  std::string mounted_secret;
  for (const Json& mount : p.container.value("volumeMounts", Json::array())) {
    if (mount.value("mountPath", "") != p.options.webhook_cert_dir) continue;
    for (const Json& volume : p.pod_spec.value("volumes", Json::array())) {
      if (volume.value("name", "") == mount.value("name", "")) {
        mounted_secret = volume["secret"].value("secretName", "");
      }
    }
  }
  EXPECT_EQ(mounted_secret, (*certificate)["spec"].value("secretName", ""))
      << "--webhook-cert-dir is not the Certificate's Secret";
}

std::string installName(const ::testing::TestParamInfo<ShardscalerInstall>& info) {
  std::string name = info.param.dir;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Deploy, WebhookTest, ::testing::ValuesIn(shardscalerInstalls()),
                         installName);

TEST(WebhookDisruptionTest, TheOptInBudgetKeepsOneReplicaThroughADrain) {
  const ShardscalerPod p = shardscalerPod({"examples/pod-disruption-budget", "shardscaler"});
  auto pdb =
      find(render("examples/pod-disruption-budget").objects, "PodDisruptionBudget", "shardscaler");
  ASSERT_TRUE(pdb);
  EXPECT_EQ((*pdb)["metadata"].value("namespace", ""), p.ns);
  const int64_t min_available = (*pdb)["spec"].value("minAvailable", 0);
  EXPECT_GE(min_available, 1);
  EXPECT_LT(min_available, p.deployment["spec"].value("replicas", 1)) << "a drain could never go";
  const Json& pod_labels = p.deployment["spec"]["template"]["metadata"]["labels"];
  for (const auto& [key, value] : (*pdb)["spec"]["selector"]["matchLabels"].items()) {
    EXPECT_EQ(Json(pod_labels.value(key, "")), value);
  }
}

TEST(WebhookNamespacedTest, SeesOnlyItsNamespaceUnderItsOwnName) {
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[1]);
  EXPECT_EQ(p.options.webhook_configuration, "shardscaler-guard-" + p.ns);
  const Json vwc = *find(render("overlays/namespaced").objects, "ValidatingWebhookConfiguration",
                         p.options.webhook_configuration);
  Json injected = vwc;
  for (Json& hook : injected["webhooks"]) hook["clientConfig"]["caBundle"] = "Y2E=";
  const Json other = {{"metadata", {{"labels", {{"kubernetes.io/metadata.name", "other"}}}}}};
  EXPECT_FALSE(guard::checkWebhookConfiguration(injected, other).enforced);
}

}  // namespace
}  // namespace shardscaler::deploy_test
