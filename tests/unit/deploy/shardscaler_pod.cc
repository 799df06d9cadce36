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
  };
  return installs;
}

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
  service::OptionsEnvironment env{.pod_namespace = pod.ns, .default_identity = "pod_uuid"};
  auto command = service::parseCommandLine(std::span<const std::string_view>(views), env);
  if (!command) {
    throw std::runtime_error("shardscaler rejects the args of deploy/" + install.dir + ": " +
                             command.error());
  }
  auto* run = std::get_if<service::RunOptions>(&*command);
  if (run == nullptr) throw std::runtime_error("the args of deploy/" + install.dir + " are no run");
  pod.options = *run;
  return pod;
}

}  // namespace shardscaler::deploy_test
