// The directory one control plane keeps everything in, with the marks tests/control-plane/
// sweep.sh reads: "owner" (pid + start time of the owning process) and "pids" (its servers).
// Never removes a directory that another live process owns.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace shardscaler::testenv::control_plane_detail {

class WorkDir {
 public:
  // Empty `requested`: a fresh directory under testenvRoot(), removed by the destructor.
  // Otherwise `requested` (created if needed), of which only etcd's data is removed; throws if a
  // live process other than this one owns it.
  explicit WorkDir(const std::filesystem::path& requested);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path etcdDataDir() const { return path_ / "etcd-data"; }
  std::filesystem::path logDir() const { return path_ / "logs"; }
  void keep() { keep_ = true; }
  // Rewrites the "pids" file: one "<name> <pid>" line per running server.
  void recordPids(const std::vector<std::pair<std::string, pid_t>>& servers) const;

 private:
  std::filesystem::path path_;
  bool owned_ = false;
  bool keep_ = false;
};

// $SHARDSCALER_TESTENV_ROOT, else ${TMPDIR:-/tmp}/shardscaler-testenv.
std::filesystem::path testenvRoot();

// Writes `content` to `path` through a temporary file and rename, so readers never see half.
void writeFileAtomically(const std::filesystem::path& path, const std::string& content);
// The same, then mode 0600 (tokens, keys, kubeconfigs).
void writePrivateFile(const std::filesystem::path& path, const std::string& content);

}  // namespace shardscaler::testenv::control_plane_detail
