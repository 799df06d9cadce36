#include "kube_binaries.h"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace shardscaler::testenv::control_plane_detail {
namespace {

// Both from tests/control-plane/build.sh, through CMake.
constexpr const char* kKubeVersion = SHARDSCALER_KUBE_VERSION;
constexpr const char* kKubeCacheName = SHARDSCALER_KUBE_CACHE_NAME;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::filesystem::path defaultKubeBinDir() {
  std::filesystem::path cache = env("SHARDSCALER_CACHE_DIR");
  if (cache.empty()) {
    std::string home = env("HOME");
    if (home.empty())
      throw std::runtime_error("testenv: neither SHARDSCALER_KUBE_BIN_DIR nor HOME is set");
    cache = std::filesystem::path(home) / ".cache" / "shardscaler";
  }
  return cache / kKubeCacheName;
}

bool executable(const std::filesystem::path& path) { return access(path.c_str(), X_OK) == 0; }

std::filesystem::path fromEnvOr(const char* variable, const std::filesystem::path& fallback) {
  std::string value = env(variable);
  return value.empty() ? fallback : std::filesystem::path(value);
}

}  // namespace

KubeBinaries locateKubeBinaries() {
  const std::string bin_dir_env = env("SHARDSCALER_KUBE_BIN_DIR");
  const std::filesystem::path bin_dir =
      bin_dir_env.empty() ? defaultKubeBinDir() : std::filesystem::path(bin_dir_env);
  KubeBinaries bins{bin_dir / "kube-apiserver", bin_dir / "kube-controller-manager",
                    fromEnvOr("SHARDSCALER_ETCD", "/usr/bin/etcd"),
                    fromEnvOr("SHARDSCALER_KUBECTL", "/usr/bin/kubectl")};
  for (const auto& path : {bins.kube_apiserver, bins.kube_controller_manager}) {
    if (!executable(path)) {
      throw std::runtime_error(
          "testenv: " + path.string() + " is missing. Build kube-apiserver and " +
          "kube-controller-manager " + kKubeVersion +
          " once with tests/control-plane/build.sh (about 6 minutes; cached in " +
          defaultKubeBinDir().string() + "), or point SHARDSCALER_KUBE_BIN_DIR at them.");
    }
  }
  if (!executable(bins.etcd)) {
    throw std::runtime_error("testenv: " + bins.etcd.string() +
                             " is missing: apt-get install etcd-server (tests/control-plane/"
                             "build.sh does), or set SHARDSCALER_ETCD.");
  }
  if (!executable(bins.kubectl)) {
    throw std::runtime_error("testenv: " + bins.kubectl.string() +
                             " is missing: apt-get install kubernetes-client (tests/control-plane/"
                             "build.sh does), or set SHARDSCALER_KUBECTL.");
  }
  return bins;
}

}  // namespace shardscaler::testenv::control_plane_detail
