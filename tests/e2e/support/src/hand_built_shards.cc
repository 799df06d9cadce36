#include "shardscaler/e2e/hand_built_shards.h"

#include <stdexcept>

#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"

namespace shardscaler::e2e {

std::string handBuiltShardName(int index) { return test_objects::shardName(index); }

void buildTargetByHand(const std::string& ns, int shards) {
  apply(
      "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
      "namespace: " +
      ns + "}\nspec: {replicas: 1, shards: " + std::to_string(shards) + "}\n");
  apply(shardSetYaml(ns, "main",
                     {.shards = shards, .when_scaled = "Retain", .retention_period = "1h"}));
}

namespace {

// Prometheus main's shards in `ns`, owned by it as the API server has it now.
test_objects::ShardShape shardShape(const std::string& ns) {
  const Json target = getOrNull(kPrometheuses, ns, "main");
  return {.ns = ns,
          .target_uid = target.is_object() ? target["metadata"]["uid"].get<std::string>() : "",
          .uid_prefix = "",
          .resource_version_base = std::nullopt,
          .replicas = 0};
}

// The pod template the API server requires; no pod is ever created (replicas 0).
Json withPodTemplate(Json sts, int index) {
  const std::string app = "guard-e2e-" + std::to_string(index);
  sts["spec"]["serviceName"] = "";
  sts["spec"]["selector"] = {{"matchLabels", {{"app", app}}}};
  sts["spec"]["template"] = {
      {"metadata", {{"labels", {{"app", app}}}}},
      {"spec", {{"containers", {{{"name", "prometheus"}, {"image", "none"}}}}}}};
  return sts;
}

}  // namespace

Json handBuiltShard(const std::string& ns, int index) {
  return withPodTemplate(test_objects::attachedShard(index, shardShape(ns)), index);
}

void createActiveShard(const std::string& ns, int index) {
  auto r = adminClient().create(k8s::resources::statefulSets(), ns, handBuiltShard(ns, index));
  if (!r) throw std::runtime_error("create shard: " + r.error().describe());
}

void createRetainedShard(const std::string& ns, int index, const std::string& deadline) {
  const Json sts =
      withPodTemplate(test_objects::retainedShard(index, deadline, shardShape(ns)), index);
  auto r = adminClient().create(k8s::resources::statefulSets(), ns, sts);
  if (!r) throw std::runtime_error("create retained shard: " + r.error().describe());
}

bool intact(const std::string& ns, const std::string& name) {
  const Json sts = getOrNull(k8s::resources::statefulSets(), ns, name);
  return sts.is_object() && !sts["metadata"].contains("deletionTimestamp");
}

}  // namespace shardscaler::e2e
