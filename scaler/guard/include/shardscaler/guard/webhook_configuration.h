// The shard guard's ValidatingWebhookConfiguration: the one shape that deploy/ installs and tests
// create, and the check of a live one against it. Pure JSON: nothing here talks to a server.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace shardscaler::guard {

inline constexpr std::string_view kDefaultWebhookConfigurationName = "shardscaler-guard";
// DELETE of any StatefulSet a ShardSet manages. failurePolicy Fail: while no replica answers, no
// managed shard is deleted.
inline constexpr std::string_view kDeleteWebhookName = "delete.guard.shardscaler.io";
// UPDATE of any StatefulSet a ShardSet manages: anyone changing what a later DELETE would be
// judged by. failurePolicy Ignore: while no replica answers, the operator's ordinary updates of
// active shards (a rollout, a resources change) go through.
inline constexpr std::string_view kUpdateWebhookName = "update.guard.shardscaler.io";
// UPDATE of a retained StatefulSet (the old or the new object carries shardscaler.io/retained):
// the operator re-labelling one it does not see as detached, anyone moving its deadline or
// dropping the label. failurePolicy Fail: nothing but shardscaler has business with a retained
// shard, so it stays fail-closed while no replica answers.
inline constexpr std::string_view kRetainedWebhookName = "retained.guard.shardscaler.io";
// UPDATE of prometheuses and prometheusagents, and of their scale subresource: anyone but
// shardscaler changing a claimed target's shard count (target_decision.h). failurePolicy Ignore:
// the StatefulSet webhooks keep the data safe without it, so a shardscaler that cannot answer must
// not stop every edit of every target. It is not part of what makes the guard enforced.
inline constexpr std::string_view kTargetWebhookName = "target.guard.shardscaler.io";
// Short: a denied or failed DELETE only delays, and every request pays it when shardscaler hangs.
inline constexpr int kWebhookTimeoutSeconds = 5;

// Where the API server calls the guard: a Service (in a cluster) or a URL (tests).
struct WebhookClientConfig {
  std::string url;  // "https://127.0.0.1:9443/guard/statefulsets"; else the service fields
  std::string service_namespace;
  std::string service_name;
  int service_port = 443;
  std::string ca_bundle;  // base64 of the PEM bundle; "" leaves it for the injector
};

// The three StatefulSet webhooks (with the objectSelectors that keep StatefulSets no ShardSet
// manages away from the guard; failurePolicy Fail for DELETEs and for UPDATEs of retained shards,
// Ignore for the other UPDATEs) and the target webhook (failurePolicy Ignore, no selector: a Scale
// carries no labels), all sideEffects None, admissionReviewVersions [v1].
nlohmann::json webhookConfiguration(std::string_view name, const WebhookClientConfig& client);

struct GuardStatus {
  bool enforced = false;
  std::string reason;  // why not (or, when enforced, a short confirmation)
};

// Whether `configuration` (as read from the API server) makes the API server enforce the guard
// for objects in the namespace whose object is `namespace_object` (JSON null: unknown, which only
// matters when a webhook has a namespaceSelector): every DELETE of a managed StatefulSet and every
// UPDATE of a retained one fail closed, and every UPDATE of a managed one is judged while
// shardscaler answers (update.guard with Fail, the configuration of earlier installs, covers the
// retained ones too).
GuardStatus checkWebhookConfiguration(const nlohmann::json& configuration,
                                      const nlohmann::json& namespace_object);

}  // namespace shardscaler::guard
