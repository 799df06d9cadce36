#include "shardscaler/guard/webhook_configuration.h"

#include <algorithm>

#include "shardscaler/guard/shard_guard.h"
#include "shardscaler/k8s_client/label_selector.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::guard {
namespace {

using Json = nlohmann::json;

struct ExpectedWebhook {
  std::string_view name;
  std::string_view operation;
  std::string_view selector_label;  // the objects it sees carry it ...
  std::string_view excluded_label;  // ... and not this one (may be empty)
  std::string_view failure_policy;  // as deploy/ installs it
};

constexpr ExpectedWebhook kDelete = {kDeleteWebhookName, "DELETE", api::kShardSetLabel, "", "Fail"};
// Retained shards are retained.guard's: an UPDATE that keeps one retained is judged once, and a
// denial names one webhook.
constexpr ExpectedWebhook kUpdate = {kUpdateWebhookName, "UPDATE", api::kShardSetLabel,
                                     api::kRetainedLabel, "Ignore"};
constexpr ExpectedWebhook kRetained = {kRetainedWebhookName, "UPDATE", api::kRetainedLabel, "",
                                       "Fail"};

Json clientConfig(const WebhookClientConfig& client) {
  Json client_config = Json::object();
  if (!client.url.empty()) {
    client_config["url"] = client.url;
  } else {
    client_config["service"] = {{"namespace", client.service_namespace},
                                {"name", client.service_name},
                                {"path", kGuardPath},
                                {"port", client.service_port}};
  }
  if (!client.ca_bundle.empty()) client_config["caBundle"] = client.ca_bundle;
  return client_config;
}

Json webhook(const ExpectedWebhook& expected, const WebhookClientConfig& client) {
  Json expressions = Json::array({{{"key", expected.selector_label}, {"operator", "Exists"}}});
  if (!expected.excluded_label.empty()) {
    expressions.push_back({{"key", expected.excluded_label}, {"operator", "DoesNotExist"}});
  }
  return {
      {"name", expected.name},
      {"clientConfig", clientConfig(client)},
      {"rules", Json::array({{{"apiGroups", {"apps"}},
                              {"apiVersions", {"v1"}},
                              {"resources", {"statefulsets"}},
                              {"operations", {expected.operation}},
                              {"scope", "Namespaced"}}})},
      {"objectSelector", {{"matchExpressions", expressions}}},
      {"failurePolicy", expected.failure_policy},
      {"matchPolicy", "Equivalent"},
      {"sideEffects", "None"},
      {"timeoutSeconds", kWebhookTimeoutSeconds},
      {"admissionReviewVersions", {"v1"}},
  };
}

Json targetWebhook(const WebhookClientConfig& client) {
  Json rules = Json::array();
  for (auto kind : {planner::TargetKind::Prometheus, planner::TargetKind::PrometheusAgent}) {
    const k8s::Resource resource = planner::targetResource(kind);
    rules.push_back({{"apiGroups", {resource.group}},
                     {"apiVersions", {resource.version}},
                     {"resources", {resource.resource, resource.resource + "/scale"}},
                     {"operations", {"UPDATE"}},
                     {"scope", "Namespaced"}});
  }
  return {
      {"name", kTargetWebhookName},
      {"clientConfig", clientConfig(client)},
      {"rules", rules},
      {"failurePolicy", "Ignore"},
      {"matchPolicy", "Equivalent"},
      {"sideEffects", "None"},
      {"timeoutSeconds", kWebhookTimeoutSeconds},
      {"admissionReviewVersions", {"v1"}},
  };
}

bool listHas(const Json& list, std::string_view value) {
  if (!list.is_array()) return false;
  return std::ranges::any_of(list, [&](const Json& v) {
    return v.is_string() && (v.get<std::string>() == value || v.get<std::string>() == "*");
  });
}

bool coversStatefulSets(const Json& rules, std::string_view operation) {
  if (!rules.is_array()) return false;
  return std::ranges::any_of(rules, [&](const Json& rule) {
    if (!rule.is_object()) return false;
    const std::string scope = rule.value("scope", "*");
    const bool resources =
        listHas(rule.value("resources", Json()), "statefulsets") ||
        (rule.contains("resources") &&
         std::ranges::find(rule["resources"], Json("*/*")) != rule["resources"].end());
    return listHas(rule.value("operations", Json()), operation) &&
           listHas(rule.value("apiGroups", Json()), "apps") &&
           listHas(rule.value("apiVersions", Json()), "v1") && resources &&
           (scope == "*" || scope == "Namespaced");
  });
}

// True when the selector selects at least every object that carries `label` (and lacks
// `excluded`, when that is not empty): empty, or only `label Exists` (and `excluded DoesNotExist`)
// terms.
bool selectsEveryLabelled(const Json& selector, std::string_view label,
                          std::string_view excluded = {}) {
  if (selector.is_null()) return true;
  if (!selector.is_object()) return false;
  if (selector.contains("matchLabels") && !selector["matchLabels"].is_null() &&
      !selector["matchLabels"].empty()) {
    return false;
  }
  const Json expressions = selector.value("matchExpressions", Json::array());
  if (!expressions.is_array()) return false;
  return std::ranges::all_of(expressions, [&](const Json& e) {
    if (!e.is_object()) return false;
    const std::string key = e.value("key", "");
    const std::string op = e.value("operator", "");
    return (key == label && op == "Exists") ||
           (!excluded.empty() && key == excluded && op == "DoesNotExist");
  });
}

std::string selectorText(const ExpectedWebhook& expected) {
  std::string text = std::string(expected.selector_label) + " Exists";
  if (!expected.excluded_label.empty()) {
    text.append(", ").append(expected.excluded_label).append(" DoesNotExist");
  }
  return text;
}

std::string failurePolicyOf(const Json& hook) {
  return hook.value("failurePolicy", "Fail");  // the v1 default
}

// Why `hook` does not judge every `expected.operation` of the StatefulSets labelled
// `expected.selector_label` in this namespace, or "" when it does. With `fail_closed`, also why it
// would let them through while shardscaler does not answer.
std::string checkWebhook(const Json& hook, const ExpectedWebhook& expected, bool fail_closed,
                         const Json& namespace_object) {
  const std::string name(expected.name);
  const std::string policy = failurePolicyOf(hook);
  if (fail_closed && policy != "Fail") {
    return "webhook " + name + " has failurePolicy " + policy + ", not Fail";
  }
  if (!coversStatefulSets(hook.value("rules", Json()), expected.operation)) {
    return "webhook " + name + " has no rule for " + std::string(expected.operation) +
           " of apps/v1 statefulsets";
  }
  if (!selectsEveryLabelled(hook.value("objectSelector", Json()), expected.selector_label,
                            expected.excluded_label)) {
    return "webhook " + name + "'s objectSelector is narrower than " + selectorText(expected);
  }
  if (!listHas(hook.value("admissionReviewVersions", Json()), "v1")) {
    return "webhook " + name + "'s admissionReviewVersions lacks v1";
  }
  const Json client = hook.value("clientConfig", Json::object());
  const Json bundle = client.is_object() ? client.value("caBundle", Json()) : Json();
  if (!bundle.is_string() || bundle.get<std::string>().empty()) {
    return "webhook " + name + " has no caBundle yet";
  }
  auto ns_selector = k8s::LabelSelector::fromObject(hook.value("namespaceSelector", Json()));
  if (!ns_selector) return "webhook " + name + "'s namespaceSelector: " + ns_selector.error();
  if (!ns_selector->empty()) {
    if (namespace_object.is_null()) {
      return "webhook " + name + " has a namespaceSelector and the namespace is unknown";
    }
    const k8s::Labels labels =
        k8s::labelsOf(namespace_object.value("/metadata/labels"_json_pointer, Json::object()));
    if (!ns_selector->matches(labels)) {
      return "webhook " + name + "'s namespaceSelector leaves this namespace out";
    }
  }
  return {};
}

const Json* webhookNamed(const Json& webhooks, std::string_view name) {
  if (!webhooks.is_array()) return nullptr;
  const auto hook = std::ranges::find_if(
      webhooks, [&](const Json& h) { return h.is_object() && h.value("name", "") == name; });
  return hook == webhooks.end() ? nullptr : &*hook;
}

// "" when the configuration enforces the guard, else why not.
std::string whyNotEnforced(const Json& webhooks, const Json& namespace_object) {
  const auto check = [&](const ExpectedWebhook& expected, bool fail_closed) -> std::string {
    const Json* hook = webhookNamed(webhooks, expected.name);
    if (hook == nullptr) return "has no webhook " + std::string(expected.name);
    return checkWebhook(*hook, expected, fail_closed, namespace_object);
  };
  if (auto why = check(kDelete, true); !why.empty()) return why;
  if (auto why = check(kUpdate, false); !why.empty()) return why;
  // A retained shard's UPDATEs fail closed: through update.guard where it sees them and fails
  // closed itself (as earlier installs had it), else through retained.guard.
  const Json* update = webhookNamed(webhooks, kUpdate.name);
  if (update != nullptr && failurePolicyOf(*update) == "Fail" &&
      selectsEveryLabelled(update->value("objectSelector", Json()), kUpdate.selector_label)) {
    return {};
  }
  return check(kRetained, true);
}

}  // namespace

Json webhookConfiguration(std::string_view name, const WebhookClientConfig& client) {
  Json webhooks = Json::array();
  for (const auto& expected : {kDelete, kUpdate, kRetained}) {
    webhooks.push_back(webhook(expected, client));
  }
  webhooks.push_back(targetWebhook(client));
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "ValidatingWebhookConfiguration"},
          {"metadata", {{"name", name}}},
          {"webhooks", webhooks}};
}

GuardStatus checkWebhookConfiguration(const Json& configuration, const Json& namespace_object) {
  const std::string name = configuration.value("/metadata/name"_json_pointer, "");
  const std::string why =
      whyNotEnforced(configuration.value("webhooks", Json::array()), namespace_object);
  if (!why.empty()) {
    std::string reason = "ValidatingWebhookConfiguration " + name;
    reason.append(why.starts_with("has ") ? " " : ": ").append(why);
    return {false, std::move(reason)};
  }
  return {true, "ValidatingWebhookConfiguration " + name + " enforces the guard"};
}

}  // namespace shardscaler::guard
