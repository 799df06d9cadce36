// Whether the API server enforces the shard guard right now, read live, for the controller to
// decide if a transition may skip the unguarded fallback's settle time. Reads only.
#pragma once

#include <string>

#include "shardscaler/guard/webhook_configuration.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::guard {

// GETs the ValidatingWebhookConfiguration `configuration_name` (and, when a webhook has a
// namespaceSelector, namespace `ns`) and checks it with checkWebhookConfiguration. A failed read
// is "not enforced" with the error as the reason.
GuardStatus readGuardStatus(k8s::KubeClient& client, const std::string& configuration_name,
                            const std::string& ns);

}  // namespace shardscaler::guard
