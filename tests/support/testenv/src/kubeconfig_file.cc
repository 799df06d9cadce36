#include "kubeconfig_file.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "work_dir.h"

namespace shardscaler::testenv::control_plane_detail {

namespace {

// JSON strings are YAML scalars too, with every escape a path or token could need.
std::string yamlString(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

std::filesystem::path writeKubeconfigFile(const std::filesystem::path& dir,
                                          const KubeconfigSpec& spec) {
  if (spec.user.empty() ||
      spec.user.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789._-") != std::string::npos) {
    throw std::invalid_argument("testenv: kubeconfig name must be [A-Za-z0-9._-]+: " + spec.user);
  }
  auto path = dir / (spec.user + ".kubeconfig");
  std::string yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: testenv\n  cluster:\n";
  yaml += "    server: " + yamlString(spec.server) + "\n";
  yaml += "    certificate-authority: " + yamlString(spec.ca_file.string()) + "\n";
  yaml += "users:\n- name: " + yamlString(spec.user) + "\n";
  yaml += "  user:\n    token: " + yamlString(spec.token) + "\n";
  yaml += "contexts:\n- name: " + yamlString(spec.user) + "\n";
  yaml += "  context:\n    cluster: testenv\n    user: " + yamlString(spec.user) + "\n";
  if (!spec.ns.empty()) yaml += "    namespace: " + yamlString(spec.ns) + "\n";
  yaml += "current-context: " + yamlString(spec.user) + "\n";
  writePrivateFile(path, yaml);
  return path;
}

}  // namespace shardscaler::testenv::control_plane_detail
