// Where shardscaler runs in a rendering of deploy/: its Deployment, container, pod namespace and
// ServiceAccount, and its `shardscaler run` options as the real flag parser reads them.
// Finds and parses only; the tests decide what is right.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "manifests.h"
#include "shardscaler/app/run_options.h"

namespace shardscaler::deploy_test {

// A rendering that runs shardscaler, and the names to find it by.
struct ShardscalerInstall {
  std::string dir;         // under deploy/
  std::string deployment;  // the Deployment that carries the shardscaler container
};
// For GoogleTest's names of parameterized cases.
inline std::ostream& operator<<(std::ostream& os, const ShardscalerInstall& install) {
  return os << "deploy/" << install.dir;
}
// deploy/base, deploy/overlays/namespaced, deploy/overlays/prometheus-operator-sidecar,
// deploy/overlays/cert-manager, deploy/overlays/external-metrics: the sources of the release
// flavours (hack/release.sh).
const std::vector<ShardscalerInstall>& shardscalerInstalls();

struct ShardscalerPod {
  Json deployment;
  Json pod_spec;
  Json container;  // the container named "shardscaler"
  std::string ns;
  std::string service_account;  // the pod's
  // The ServiceAccount shardscaler acts as: the pod's, or the one whose token Secret the
  // container's --kubeconfig reads (the sidecar's own identity), followed through the mounts.
  std::string identity;
  app::RunOptions options;  // the container's args through app::parseCommandLine
};
// Throws std::runtime_error naming what is missing or what the parser rejected.
ShardscalerPod shardscalerPod(const ShardscalerInstall& install);

}  // namespace shardscaler::deploy_test
