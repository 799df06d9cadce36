#include "statefulset_builder.h"

#include <cstdint>

#include "shard_naming.h"
#include "target_spec.h"

namespace shardscaler::emulator {

namespace {

constexpr const char* kConfigDir = "/etc/prometheus/config";
constexpr const char* kConfigOutDir = "/etc/prometheus/config_out";
constexpr const char* kStorageDir = "/prometheus";

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

Json labelsJson(const Labels& labels) {
  Json out = Json::object();
  for (const auto& [key, value] : labels) out[key] = value;
  return out;
}

Json reloaderContainer(bool init, int shard, const std::vector<Json>& mounts) {
  Json args = Json::array();
  if (init) args.push_back("--watch-interval=0");
  args.push_back(init ? "--listen-address=:8081" : "--listen-address=:8080");
  if (!init) args.push_back("--reload-url=http://localhost:9090/-/reload");
  args.push_back(std::string("--config-file=") + kConfigDir + "/prometheus.yaml.gz");
  args.push_back(std::string("--config-envsubst-file=") + kConfigOutDir + "/prometheus.env.yaml");
  args.push_back(std::string("--watched-dir=") + kConfigDir);
  return Json{
      {"name", init ? "init-config-reloader" : "config-reloader"},
      {"image", kDefaultConfigReloaderImage},
      {"command", Json::array({"/bin/prometheus-config-reloader"})},
      {"args", std::move(args)},
      {"env", Json::array({Json{{"name", "POD_NAME"},
                                {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
                           Json{{"name", "SHARD"}, {"value", std::to_string(shard)}}})},
      {"ports", Json::array({Json{{"name", init ? "reloader-init" : "reloader-web"},
                                  {"containerPort", init ? 8081 : 8080},
                                  {"protocol", "TCP"}}})},
      {"volumeMounts", mounts},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", Json::array({"ALL"})}}}}},
  };
}

}  // namespace

std::string statefulSetInputHash(const Json& target, const Json& existing_spec) {
  Json spec = existing_spec.is_object() ? existing_spec : Json();
  if (spec.is_object()) spec.erase("revisionHistoryLimit");
  const Json& meta = objectField(target, "metadata");
  Json http2;
  if (auto web = specOf(target).find("web"); web != specOf(target).end() && web->is_object()) {
    http2 = web->value("httpConfig", Json::object()).value("http2", Json());
  }
  Json inputs{{"labels", meta.value("labels", Json())},
              {"annotations", meta.value("annotations", Json())},
              {"generation", meta.value("generation", 0)},
              {"http2", http2},
              {"statefulSetSpec", spec}};
  return std::to_string(fnv1a(inputs.dump()));
}

Json makeStatefulSet(const TargetKind& kind, const Json& target, int shard,
                     const std::string& input_hash) {
  const Json& meta = objectField(target, "metadata");
  const Json& spec = specOf(target);
  const std::string name = meta.value("name", "");
  const std::string version = specString(spec, "version", kDefaultPrometheusVersion);
  const std::string prefixed = kind.prefix + "-" + name;

  // Pod selector: makeSelectorLabels + the shard (immutable once created).
  Labels pod_selector = selectorLabels(kind, name);
  pod_selector[kShardLabel] = std::to_string(shard);

  // Pod labels: the version, spec.podMetadata.labels, then the selector labels win.
  Json pod_labels = Json{{kAppVersionLabel, version[0] == 'v' ? version.substr(1) : version}};
  Json pod_annotations = Json{{"kubectl.kubernetes.io/default-container", "prometheus"}};
  if (auto pm = spec.find("podMetadata"); pm != spec.end() && pm->is_object()) {
    // Each map is held in a named local: items() of a temporary would dangle in the loop.
    const Json extra_labels = pm->value("labels", Json::object());
    const Json extra_annotations = pm->value("annotations", Json::object());
    for (const auto& [k, v] : extra_labels.items()) pod_labels[k] = v;
    for (const auto& [k, v] : extra_annotations.items()) pod_annotations[k] = v;
  }
  for (const auto& [k, v] : pod_selector) pod_labels[k] = v;

  // StatefulSet labels, in UpdateObject's order (later options win): managed-by labels, the
  // target's labels, the mode, the selector labels.
  Json labels = Json{{kManagedByLegacyLabel, kManagedByValue}, {kManagedByLabel, kManagedByValue}};
  const Json target_labels = meta.value("labels", Json::object());
  for (const auto& [k, v] : target_labels.items()) labels[k] = v;
  labels[kModeLabel] = kind.mode;
  for (const auto& [k, v] : pod_selector) labels[k] = v;

  // Annotations: the target's, minus kubectl's, plus the input hash.
  Json annotations = Json::object();
  const Json target_annotations = meta.value("annotations", Json::object());
  for (const auto& [k, v] : target_annotations.items()) {
    if (k.rfind(kKubectlPrefix, 0) != 0) annotations[k] = v;
  }
  annotations[kInputHashAnnotation] = input_hash;

  Json args = Json::array({std::string("--config.file=") + kConfigOutDir + "/prometheus.env.yaml",
                           "--web.enable-lifecycle", "--web.route-prefix=/"});
  if (kind.server) {
    args.push_back(std::string("--storage.tsdb.path=") + kStorageDir);
  } else {
    args.push_back("--agent");
    args.push_back(std::string("--storage.agent.path=") + kStorageDir);
  }
  const std::string image =
      specString(spec, "image", std::string(kDefaultPrometheusBaseImage) + ":" + version);
  const std::string volume_name = prefixed + "-db";
  Json prometheus{
      {"name", "prometheus"},
      {"image", image},
      {"args", std::move(args)},
      {"ports", Json::array({Json{{"name", specString(spec, "portName", "web")},
                                  {"containerPort", 9090},
                                  {"protocol", "TCP"}}})},
      {"volumeMounts",
       Json::array({Json{{"name", "config-out"}, {"readOnly", true}, {"mountPath", kConfigOutDir}},
                    Json{{"name", volume_name}, {"mountPath", kStorageDir}}})},
      {"terminationMessagePolicy", "FallbackToLogsOnError"},
      {"securityContext",
       {{"allowPrivilegeEscalation", false},
        {"readOnlyRootFilesystem", true},
        {"capabilities", {{"drop", Json::array({"ALL"})}}}}},
  };
  if (auto resources = spec.find("resources"); resources != spec.end()) {
    prometheus["resources"] = *resources;
  }
  const std::vector<Json> reloader_mounts{
      Json{{"name", "config"}, {"mountPath", kConfigDir}},
      Json{{"name", "config-out"}, {"mountPath", kConfigOutDir}}};

  Json pod_spec{
      {"shareProcessNamespace", false},
      {"containers",
       Json::array({std::move(prometheus), reloaderContainer(false, shard, reloader_mounts)})},
      {"initContainers", Json::array({reloaderContainer(true, shard, reloader_mounts)})},
      {"automountServiceAccountToken", spec.value("automountServiceAccountToken", true)},
      {"terminationGracePeriodSeconds",
       spec.value("terminationGracePeriodSeconds", kDefaultTerminationGracePeriodSeconds)},
      {"volumes", Json::array({Json{{"name", "config"},
                                    {"secret", {{"secretName", configSecretName(kind, name)}}}},
                               Json{{"name", "config-out"}, {"emptyDir", {{"medium", "Memory"}}}},
                               Json{{"name", volume_name}, {"emptyDir", Json::object()}}})},
  };
  for (const char* passthrough : {"serviceAccountName", "nodeSelector", "tolerations", "affinity",
                                  "securityContext", "priorityClassName", "schedulerName"}) {
    if (auto value = spec.find(passthrough); value != spec.end() && !value->is_null()) {
      pod_spec[passthrough] = *value;
    }
  }

  Json sts_spec{
      {"serviceName", specString(spec, "serviceName", kind.governing_service)},
      {"replicas", replicasNumber(target)},
      {"podManagementPolicy", specString(spec, "podManagementPolicy", "Parallel")},
      {"updateStrategy", {{"type", "RollingUpdate"}}},
      {"selector", {{"matchLabels", labelsJson(pod_selector)}}},
      {"template",
       {{"metadata", {{"labels", std::move(pod_labels)}, {"annotations", pod_annotations}}},
        {"spec", std::move(pod_spec)}}},
  };
  if (auto mrs = spec.find("minReadySeconds");
      mrs != spec.end() && mrs->is_number_integer() && mrs->get<long long>() != 0) {
    sts_spec["minReadySeconds"] = *mrs;
  }

  return Json{
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata",
       {{"name", statefulSetName(kind, name, shard)},
        {"namespace", meta.value("namespace", "")},
        {"labels", std::move(labels)},
        {"annotations", std::move(annotations)},
        {"ownerReferences", Json::array({controllerOwnerReference(kind, target)})}}},
      {"spec", std::move(sts_spec)},
  };
}

}  // namespace shardscaler::emulator
