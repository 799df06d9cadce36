// Where the programs of the test control plane are on this machine.
// Never builds or installs anything: a missing binary is an error telling how to get it.
#pragma once

#include <filesystem>

namespace shardscaler::testenv::control_plane_detail {

struct KubeBinaries {
  std::filesystem::path kube_apiserver;
  std::filesystem::path kube_controller_manager;
  std::filesystem::path etcd;
  std::filesystem::path kubectl;
};

// kube-apiserver and kube-controller-manager v1.20.2 from $SHARDSCALER_KUBE_BIN_DIR, else from
// tests/control-plane/build.sh's cache ($SHARDSCALER_CACHE_DIR or ~/.cache/shardscaler, then
// kube-v1.20.2-r<revision>/); etcd from $SHARDSCALER_ETCD or /usr/bin/etcd; kubectl from
// $SHARDSCALER_KUBECTL or /usr/bin/kubectl. Throws std::runtime_error naming what is missing and
// the fix.
KubeBinaries locateKubeBinaries();

}  // namespace shardscaler::testenv::control_plane_detail
