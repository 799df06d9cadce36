// The shard guard set up for a test or a benchmark: deploy/webhook's ValidatingWebhookConfiguration
// calling a shardscaler on a loopback port for the namespaces with a given label, and a plain user
// with the Prometheus Operator's rights so that the guard judges the operator's writes (the admin
// user is exempt). It starts no process; the caller removes what it installed.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "shardscaler/e2e/shardscaler_process.h"

namespace shardscaler::e2e {

struct GuardWebhook {
  std::string configuration;  // the ValidatingWebhookConfiguration's name
  int port = 0;               // shardscaler's webhook port on 127.0.0.1
  std::string label_key;      // the namespaces labelled label_key=label_value are guarded
  std::string label_value;
};

// Renders deploy/webhook, points both webhooks at https://127.0.0.1:<port>, scopes them with a
// namespaceSelector, and creates it (replacing one of the same name). The caBundle is left for
// shardscaler to inject.
void installGuardWebhook(const GuardWebhook& webhook);
// Deletes it; nothing when it does not exist.
void removeGuardWebhook(const std::string& configuration);
// Labels `ns` so that the webhook covers it.
void guardNamespace(const GuardWebhook& webhook, const std::string& ns);
// `shardscaler run` flags that serve this webhook with a certificate kept in <cert_ns>'s Secret.
std::vector<std::string> guardServingArgs(const GuardWebhook& webhook, const std::string& cert_ns);

// DELETE reviews the process answered (allowed + denied), from its /metrics.
double guardDeleteReviews(const ShardscalerProcess& shardscaler);
// Until the API server really calls the guard for `ns`: a server-side dry run of deleting a probe
// StatefulSet "guard-probe" (labelled for a ShardSet that does not exist, so always allowed)
// reaches it. The probe is deleted again afterwards.
::testing::AssertionResult waitUntilGuardCalled(
    const ShardscalerProcess& shardscaler, const std::string& ns,
    std::chrono::seconds timeout = std::chrono::seconds(60));

// The Prometheus Operator's rights in `ns` (targets and their status, StatefulSets, Secrets,
// Services, pods, Events), bound to `user`.
void grantOperatorRole(const std::string& ns, const std::string& user);

}  // namespace shardscaler::e2e
