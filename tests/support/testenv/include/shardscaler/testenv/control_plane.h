// A real local Kubernetes control plane for tests: etcd + kube-apiserver +
// kube-controller-manager on loopback, on free ports, torn down on every exit path.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace shardscaler::testenv {

struct ControlPlaneOptions {
  // Directory for data, certificates, logs and the kubeconfig; a fresh temporary one if empty.
  std::filesystem::path work_dir;
  // Extra kube-controller-manager flags (e.g. a shorter HPA sync period).
  std::vector<std::string> extra_controller_manager_flags;
  bool start_controller_manager = true;
};

class ControlPlane {
 public:
  // Starts everything and waits for /readyz; throws std::runtime_error with the tail of the
  // failing server's log if anything does not come up in time.
  explicit ControlPlane(ControlPlaneOptions options = {});
  ~ControlPlane();  // stops every process it started
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // https://127.0.0.1:<port>
  const std::string& server() const;
  // A kubeconfig for the cluster-admin user (system:masters), usable by kubectl.
  const std::filesystem::path& kubeconfigPath() const;
  const std::filesystem::path& caFile() const;  // CA of the serving certificate
  const std::string& adminToken() const;
  const std::filesystem::path& workDir() const;

  // Adds a user to the static token file is impossible at run time, so the control plane
  // pre-provisions a few unprivileged users: "user-1".."user-3" with tokens returned here
  // (they belong to no group but system:authenticated).
  std::string userToken(int index) const;

  // Writes a kubeconfig for the given bearer token (and optional default namespace).
  std::filesystem::path writeKubeconfig(const std::string& name, const std::string& token,
                                        const std::string& ns = {}) const;

  // Runs kubectl against this control plane; returns exit code, stdout in *out.
  int kubectl(const std::string& args, std::string* out = nullptr) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// For GoogleTest: a global environment owning one control plane per test binary.
// Tests reach it through sharedControlPlane().
ControlPlane& sharedControlPlane();

}  // namespace shardscaler::testenv
