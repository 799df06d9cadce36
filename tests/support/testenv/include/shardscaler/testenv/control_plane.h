// A real local Kubernetes control plane for tests: etcd + kube-apiserver +
// kube-controller-manager on loopback, on free ports, torn down on every exit path.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shardscaler::testenv {

struct ControlPlaneOptions {
  // Directory for data, certificates, logs and the kubeconfig. Empty: a fresh directory under
  // $SHARDSCALER_TESTENV_ROOT (default ${TMPDIR:-/tmp}/shardscaler-testenv), removed on
  // destruction. A given directory is kept (only etcd's data is removed).
  std::filesystem::path work_dir;
  // Extra kube-controller-manager flags, after the defaults (the last value of a flag wins),
  // e.g. "--horizontal-pod-autoscaler-downscale-stabilization=10s".
  std::vector<std::string> extra_controller_manager_flags;
  // Extra kube-apiserver flags, after the defaults.
  std::vector<std::string> extra_apiserver_flags;
  bool start_controller_manager = true;
  // The aggregation layer's flags: a front-proxy CA and client certificate of its own
  // (requestheader-* with allowed name "front-proxy-client", proxy-client-*) and
  // --enable-aggregator-routing. An aggregated API server still needs a non-loopback endpoint:
  // the API server refuses 127.0.0.0/8 in Endpoints.
  bool aggregation_layer = false;
  // Bound on the whole start-up (etcd, kube-apiserver /readyz, controllers working). A loaded
  // 2-core machine has taken 86 s to get the API server ready.
  std::chrono::seconds start_timeout{180};
  // Polled while waiting for the servers; returning true aborts the start-up (the constructor
  // stops what it started and throws). Lets a CLI honour SIGTERM during start-up.
  std::function<bool()> interrupted;
};

class ControlPlane {
 public:
  // Starts everything and waits until kube-apiserver's /readyz answers ok and (with the
  // controller-manager) the "default" ServiceAccount has its token Secret, so pods can be
  // created. Throws std::runtime_error with the tail of the failing server's log if anything
  // does not come up in time. Must run on the main thread (see sharedControlPlane()).
  explicit ControlPlane(ControlPlaneOptions options = {});
  ~ControlPlane();  // stops every process it started: SIGTERM, bounded wait, SIGKILL
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // https://127.0.0.1:<port>
  const std::string& server() const;
  int port() const;  // the port of server()
  // A kubeconfig for the cluster-admin user (system:masters), usable by kubectl.
  const std::filesystem::path& kubeconfigPath() const;
  const std::filesystem::path& caFile() const;  // CA of the serving certificate
  const std::string& adminToken() const;
  const std::filesystem::path& workDir() const;

  // The static token file cannot change at run time, so the control plane pre-provisions
  // unprivileged users "user-1".."user-3"; userToken(i) is the token of "user-<i>", i in 1..3
  // (std::out_of_range otherwise). They belong to no group but system:authenticated.
  std::string userToken(int index) const;
  static constexpr int kUserCount = 3;

  // Writes <workDir>/<name>.kubeconfig for the given bearer token (and optional default
  // namespace) and returns its path. `name` is [A-Za-z0-9._-]+.
  std::filesystem::path writeKubeconfig(const std::string& name, const std::string& token,
                                        const std::string& ns = {}) const;
  // Writes <workDir>/<name>.kubeconfig for the admin user that reaches the API server at
  // `server` (a relay or proxy in front of it, on 127.0.0.1: the serving certificate still
  // verifies) and returns its path.
  std::filesystem::path writeAdminKubeconfigVia(const std::string& name,
                                                const std::string& server) const;

  // Runs kubectl with the admin kubeconfig: `args` goes through /bin/sh, so quote as in a
  // shell; `input` is fed on stdin (for "apply -f -"). Returns the exit code (-1 if killed after
  // two minutes), stdout in *out, stderr in *err.
  int kubectl(const std::string& args, std::string* out = nullptr, std::string* err = nullptr,
              const std::string& input = {}) const;

  // Writes a shell file of `export NAME='value'` lines: KUBECONFIG, SHARDSCALER_TESTENV_SERVER,
  // _CA_FILE, _ADMIN_TOKEN, _USER_TOKEN_1.._3 and _WORK_DIR.
  void writeEnvFile(const std::filesystem::path& path) const;

  // Pids of the running servers (etcd, kube-apiserver, kube-controller-manager).
  std::vector<pid_t> serverPids() const;

  // Keep the whole work directory (logs, certificates) on destruction, e.g. after a failure.
  void keepWorkDir();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// For GoogleTest: one control plane per test binary, started on first use (from a test body,
// i.e. the main thread), stopped by a global test Environment's TearDown, or at exit. Its work
// directory is kept when a test failed or SHARDSCALER_TESTENV_KEEP=1. If start-up fails, every
// later call throws the same error without trying again.
ControlPlane& sharedControlPlane();
// The options sharedControlPlane() starts its control plane with (default: ControlPlaneOptions{}).
// Only before its first call; throws std::logic_error after.
void setSharedControlPlaneOptions(ControlPlaneOptions options);

}  // namespace shardscaler::testenv
