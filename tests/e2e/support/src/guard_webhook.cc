#include "shardscaler/e2e/guard_webhook.h"

#include <mutex>
#include <stdexcept>
#include <string_view>

#include "../../../unit/deploy/yaml_json.h"
#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/guard/shard_guard.h"

namespace shardscaler::e2e {
namespace {

const k8s::Resource kWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                           "validatingwebhookconfigurations", false};
constexpr const char* kProbe = "guard-probe";

// deploy/webhook's configuration as kustomize renders it; rendered once per process.
const Json& renderedConfiguration() {
  static std::once_flag once;
  static Json configuration;
  std::call_once(once, [] {
    auto rendered = kubectl("kustomize " + (sourceDir() / "deploy/webhook").string());
    if (rendered.exit_code != 0) throw std::runtime_error("kubectl kustomize: " + rendered.err);
    for (Json& o : deploy_test::yamlStreamToJson(rendered.out)) {
      if (o.value("kind", "") == "ValidatingWebhookConfiguration") configuration = std::move(o);
    }
  });
  if (!configuration.is_object()) throw std::runtime_error("deploy/webhook renders no webhook");
  return configuration;
}

}  // namespace

void installGuardWebhook(const GuardWebhook& webhook) {
  Json vwc = renderedConfiguration();
  vwc["metadata"]["name"] = webhook.configuration;
  const std::string url =
      "https://127.0.0.1:" + std::to_string(webhook.port) + std::string(guard::kGuardPath);
  for (Json& hook : vwc["webhooks"]) {
    hook["clientConfig"] = {{"url", url}};
    hook["namespaceSelector"] = {{"matchLabels", {{webhook.label_key, webhook.label_value}}}};
  }
  removeGuardWebhook(webhook.configuration);
  auto created = adminClient().create(kWebhookConfigurations, "", vwc);
  if (!created) throw std::runtime_error("create webhook: " + created.error().describe());
}

void removeGuardWebhook(const std::string& configuration) {
  auto removed = adminClient().remove(kWebhookConfigurations, "", configuration);
  if (!removed && !removed.error().is(k8s::ErrorKind::NotFound)) {
    throw std::runtime_error("delete webhook " + configuration + ": " + removed.error().describe());
  }
}

void guardNamespace(const GuardWebhook& webhook, const std::string& ns) {
  auto r = kubectl("label namespace " + ns + " " + webhook.label_key + "=" + webhook.label_value +
                   " --overwrite");
  if (r.exit_code != 0) throw std::runtime_error("label namespace: " + r.err);
}

std::vector<std::string> guardServingArgs(const GuardWebhook& webhook, const std::string& cert_ns) {
  return {"--webhook-bind-address=127.0.0.1:" + std::to_string(webhook.port),
          "--webhook-cert-secret=" + cert_ns + "/shardscaler-webhook-cert",
          "--webhook-hosts=127.0.0.1", "--webhook-configuration=" + webhook.configuration};
}

double guardDeleteReviews(const ShardscalerProcess& shardscaler) {
  constexpr std::string_view kReviews = "shardscaler_guard_reviews_total";
  return metricSum(shardscaler, kReviews, R"(operation="DELETE",result="allowed")").value_or(0) +
         metricSum(shardscaler, kReviews, R"(operation="DELETE",result="denied")").value_or(0);
}

::testing::AssertionResult waitUntilGuardCalled(const ShardscalerProcess& shardscaler,
                                                const std::string& ns,
                                                std::chrono::seconds timeout) {
  const Json probe = {
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata", {{"name", kProbe}, {"labels", {{"shardscaler.io/shardset", kProbe}}}}},
      {"spec",
       {{"replicas", 0},
        {"serviceName", ""},
        {"selector", {{"matchLabels", {{"app", kProbe}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", kProbe}}}}},
          {"spec", {{"containers", {{{"name", "probe"}, {"image", "none"}}}}}}}}}}};
  if (getOrNull(k8s::resources::statefulSets(), ns, kProbe).is_null()) {
    auto created = adminClient().create(k8s::resources::statefulSets(), ns, probe);
    if (!created) return ::testing::AssertionFailure() << created.error().describe();
  }
  std::string last;
  const bool called = test_kit::eventually(
      timeout, kPoll,
      [&](std::string* seen) {
        const double before = guardDeleteReviews(shardscaler);
        auto r = kubectl(std::string("delete statefulset ") + kProbe + " -n " + ns +
                         " --dry-run=server");
        *seen = "kubectl: " + std::to_string(r.exit_code) + " " + r.err;
        return guardDeleteReviews(shardscaler) > before;
      },
      &last);
  (void)adminClient().remove(k8s::resources::statefulSets(), ns, kProbe);
  if (called) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the API server never called the guard; last: " << last;
}

void grantOperatorRole(const std::string& ns, const std::string& user) {
  apply(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: operator-emulator, "
      "namespace: " +
      ns +
      "}\nrules:\n- {apiGroups: [monitoring.coreos.com], resources: [prometheuses, "
      "prometheusagents, prometheuses/status, prometheusagents/status], verbs: [get, list, "
      "watch, update, patch]}\n- {apiGroups: [monitoring.coreos.com], resources: "
      "[prometheuses/finalizers, prometheusagents/finalizers], verbs: [update]}\n- {apiGroups: "
      "[apps], resources: [statefulsets], verbs: [get, "
      "list, watch, create, update, patch, delete]}\n- {apiGroups: [\"\"], resources: [secrets, "
      "services, configmaps], verbs: [get, list, watch, create, update, patch, delete]}\n- "
      "{apiGroups: [\"\"], resources: [pods], verbs: [get, list, watch]}\n- {apiGroups: [\"\"], "
      "resources: [events], verbs: [create, patch]}\n---\napiVersion: "
      "rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: operator-emulator, "
      "namespace: " +
      ns +
      "}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: operator-emulator}\n"
      "subjects: [{kind: User, name: " +
      user + ", apiGroup: rbac.authorization.k8s.io}]\n");
}

}  // namespace shardscaler::e2e
