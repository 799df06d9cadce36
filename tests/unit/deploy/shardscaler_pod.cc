#include "shardscaler_pod.h"

#include <stdexcept>
#include <variant>

namespace shardscaler::deploy_test {

const std::vector<ShardscalerInstall>& shardscalerInstalls() {
  static const std::vector<ShardscalerInstall> installs = {
      {"base", "shardscaler"},
      {"overlays/namespaced", "shardscaler"},
      {"overlays/prometheus-operator-sidecar", "prometheus-operator"},
      {"overlays/cert-manager", "shardscaler"},
      {"overlays/external-metrics", "shardscaler"},
  };
  return installs;
}

namespace {

// The volume the container mounts at the longest mount path that holds `path`, and the file's
// path inside it.
std::pair<Json, std::string> mountedVolume(const ShardscalerPod& pod, const std::string& path) {
  Json best;
  std::string rest;
  size_t longest = 0;
  for (const Json& mount : pod.container.value("volumeMounts", Json::array())) {
    const std::string at = mount.value("mountPath", "");
    if (at.empty() || !path.starts_with(at + "/") || at.size() <= longest) continue;
    for (const Json& volume : pod.pod_spec.value("volumes", Json::array())) {
      if (volume.value("name", "") == mount.value("name", "")) {
        best = volume;
        rest = path.substr(at.size() + 1);
        longest = at.size();
      }
    }
  }
  if (best.is_null()) {
    throw std::runtime_error("the shardscaler container mounts no volume that holds " + path);
  }
  return {best, rest};
}

// The ServiceAccount the kubeconfig at `path` (mounted from a ConfigMap) authenticates as: its
// user's tokenFile must be a mounted Secret of type kubernetes.io/service-account-token.
std::string kubeconfigIdentity(const std::vector<Json>& objects, const ShardscalerPod& pod,
                               const std::string& path) {
  const auto [volume, file] = mountedVolume(pod, path);
  const std::string map_name = volume.value("/configMap/name"_json_pointer, "");
  auto map = find(objects, "ConfigMap", map_name);
  if (!map || !(*map)["data"].contains(file)) {
    throw std::runtime_error("the kubeconfig " + path + " is not in a rendered ConfigMap");
  }
  const auto kubeconfig = yamlDocuments((*map)["data"][file].get<std::string>());
  if (kubeconfig.size() != 1 || kubeconfig[0].value("users", Json::array()).size() != 1) {
    throw std::runtime_error("the kubeconfig " + path + " must name exactly one user");
  }
  const std::string token_file =
      kubeconfig[0]["users"][0].value("/user/tokenFile"_json_pointer, "");
  const auto [token_volume, token_key] = mountedVolume(pod, token_file);
  auto secret = find(objects, "Secret", token_volume.value("/secret/secretName"_json_pointer, ""));
  if (!secret || secret->value("type", "") != "kubernetes.io/service-account-token" ||
      token_key != "token") {
    throw std::runtime_error("the kubeconfig's tokenFile " + token_file +
                             " is not the token of a rendered service-account-token Secret");
  }
  return (*secret)["metadata"]["annotations"].value("kubernetes.io/service-account.name", "");
}

}  // namespace

ShardscalerPod shardscalerPod(const ShardscalerInstall& install) {
  const auto& objects = render(install.dir).objects;
  auto deployment = find(objects, "Deployment", install.deployment);
  if (!deployment) {
    throw std::runtime_error("deploy/" + install.dir + " renders no Deployment " +
                             install.deployment);
  }
  ShardscalerPod pod;
  pod.deployment = *deployment;
  pod.pod_spec = (*deployment)["spec"]["template"]["spec"];
  pod.ns = (*deployment)["metadata"].value("namespace", "");
  pod.service_account = pod.pod_spec.value("serviceAccountName", "default");
  for (const Json& c : pod.pod_spec["containers"]) {
    if (c.value("name", "") == "shardscaler") pod.container = c;
  }
  if (pod.container.is_null()) {
    throw std::runtime_error("Deployment " + install.deployment + " has no shardscaler container");
  }

  std::vector<std::string> args;
  for (const Json& a : pod.container.value("args", Json::array())) args.push_back(a);
  std::vector<std::string_view> views(args.begin(), args.end());
  // In the cluster the namespace comes from the ServiceAccount's mounted namespace file.
  app::OptionsEnvironment env{.pod_namespace = pod.ns, .default_identity = "pod_uuid"};
  auto command = app::parseCommandLine(std::span<const std::string_view>(views), env);
  if (!command) {
    throw std::runtime_error("shardscaler rejects the args of deploy/" + install.dir + ": " +
                             command.error());
  }
  auto* run = std::get_if<app::RunOptions>(&*command);
  if (run == nullptr) throw std::runtime_error("the args of deploy/" + install.dir + " are no run");
  pod.options = *run;
  pod.identity = pod.options.kubeconfig.empty()
                     ? pod.service_account
                     : kubeconfigIdentity(objects, pod, pod.options.kubeconfig);
  return pod;
}

}  // namespace shardscaler::deploy_test
