// kubeconfig files for the clients tests start (kubectl, shardscaler, the operator emulator):
// one cluster, one bearer-token user, one context. Written private (0600), never read back here.
#pragma once

#include <filesystem>
#include <string>

namespace shardscaler::testenv::control_plane_detail {

struct KubeconfigSpec {
  std::string server;             // https://127.0.0.1:<port>
  std::filesystem::path ca_file;  // CA of the server's certificate
  std::string user;               // user and context name, [A-Za-z0-9._-]+
  std::string token;              // bearer token
  std::string ns;                 // default namespace ("" for none)
};

// Writes <dir>/<spec.user>.kubeconfig and returns its path. Throws std::invalid_argument for a
// user name outside [A-Za-z0-9._-]+ (it becomes a file name).
std::filesystem::path writeKubeconfigFile(const std::filesystem::path& dir,
                                          const KubeconfigSpec& spec);

}  // namespace shardscaler::testenv::control_plane_detail
