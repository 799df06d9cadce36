#include "shardscaler/e2e/hand_built_shards.h"

#include <stdexcept>

#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {

std::string handBuiltShardName(int index) {
  return index == 0 ? "prometheus-main" : "prometheus-main-shard-" + std::to_string(index);
}

void buildTargetByHand(const std::string& ns, int shards) {
  apply(
      "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
      "namespace: " +
      ns + "}\nspec: {replicas: 1, shards: " + std::to_string(shards) + "}\n");
  apply(shardSetYaml(ns, "main",
                     {.shards = shards, .when_scaled = "Retain", .retention_period = "1h"}));
}

Json handBuiltShard(const std::string& ns, int index) {
  const Json target = getOrNull(kPrometheuses, ns, "main");
  const std::string app = "guard-e2e-" + std::to_string(index);
  return {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata",
           {{"name", handBuiltShardName(index)},
            {"namespace", ns},
            {"labels",
             {{"app.kubernetes.io/managed-by", "prometheus-operator"},
              {"operator.prometheus.io/name", "main"},
              {"operator.prometheus.io/mode", "server"},
              {"operator.prometheus.io/shard", std::to_string(index)},
              {"shardscaler.io/shardset", "main"}}},
            {"ownerReferences",
             {{{"apiVersion", "monitoring.coreos.com/v1"},
               {"kind", "Prometheus"},
               {"name", "main"},
               {"uid", target.is_object() ? target["metadata"]["uid"] : Json("")},
               {"controller", true}}}}}},
          {"spec",
           {{"replicas", 0},
            {"serviceName", ""},
            {"selector", {{"matchLabels", {{"app", app}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", app}}}}},
              {"spec", {{"containers", {{{"name", "prometheus"}, {"image", "none"}}}}}}}}}}};
}

void createActiveShard(const std::string& ns, int index) {
  auto r = adminClient().create(k8s::resources::statefulSets(), ns, handBuiltShard(ns, index));
  if (!r) throw std::runtime_error("create shard: " + r.error().describe());
}

void createRetainedShard(const std::string& ns, int index, const std::string& deadline) {
  Json sts = handBuiltShard(ns, index);
  sts["metadata"]["labels"].erase("operator.prometheus.io/name");
  sts["metadata"]["labels"]["shardscaler.io/retained"] = "true";
  sts["metadata"]["annotations"] = {
      {"operator.prometheus.io/deletion-timestamp", deadline},
      {"shardscaler.io/detached-labels", R"({"operator.prometheus.io/name":"main"})"}};
  auto r = adminClient().create(k8s::resources::statefulSets(), ns, sts);
  if (!r) throw std::runtime_error("create retained shard: " + r.error().describe());
}

bool intact(const std::string& ns, const std::string& name) {
  const Json sts = getOrNull(k8s::resources::statefulSets(), ns, name);
  return sts.is_object() && !sts["metadata"].contains("deletionTimestamp");
}

}  // namespace shardscaler::e2e
