#include "shardscaler/guard/guard_status.h"

#include "guard_resources.h"
#include "shardscaler/k8s_client/label_selector.h"

namespace shardscaler::guard {

GuardStatus readGuardStatus(k8s::KubeClient& client, const std::string& configuration_name,
                            const std::string& ns) {
  auto configuration =
      client.get(detail::validatingWebhookConfigurations(), "", configuration_name);
  if (!configuration) {
    if (configuration.error().is(k8s::ErrorKind::NotFound)) {
      return {false, "ValidatingWebhookConfiguration " + configuration_name + " does not exist"};
    }
    return {false, "cannot read ValidatingWebhookConfiguration " + configuration_name + ": " +
                       configuration.error().describe()};
  }
  // The namespace is read only when some webhook limits the namespaces it sees.
  bool needs_namespace = false;
  if (configuration->contains("webhooks") && (*configuration)["webhooks"].is_array()) {
    for (const auto& hook : (*configuration)["webhooks"]) {
      if (!hook.is_object()) continue;
      // An unreadable selector is reported by checkWebhookConfiguration without the namespace.
      auto selector = k8s::LabelSelector::fromObject(hook.value("namespaceSelector", k8s::Json()));
      if (selector && !selector->empty()) needs_namespace = true;
    }
  }
  k8s::Json namespace_object;
  if (needs_namespace) {
    auto read = client.get(k8s::resources::namespaces(), "", ns);
    if (!read) {
      return {false, "cannot read namespace " + ns +
                         " to match the webhooks' namespaceSelector: " + read.error().describe()};
    }
    namespace_object = std::move(*read);
  }
  return checkWebhookConfiguration(*configuration, namespace_object);
}

}  // namespace shardscaler::guard
