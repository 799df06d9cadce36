#include "work_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "shardscaler/testenv/process_table.h"

namespace shardscaler::testenv::control_plane_detail {
namespace {

// Field 22 of /proc/<pid>/stat: with the pid it names one process even after pid reuse.
std::string startTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return field;
}

std::string ownerMark(pid_t pid) { return std::to_string(pid) + " " + startTime(pid) + "\n"; }

// The pid of the live process named by an owner file, or 0.
pid_t liveOwner(const std::filesystem::path& owner_file) {
  std::ifstream in(owner_file);
  pid_t pid = 0;
  std::string start;
  if (!(in >> pid >> start) || pid <= 0) return 0;
  return processAlive(pid) && startTime(pid) == start ? pid : 0;
}

}  // namespace

std::filesystem::path testenvRoot() {
  if (const char* root = std::getenv("SHARDSCALER_TESTENV_ROOT"); root && *root) return root;
  const char* tmp = std::getenv("TMPDIR");
  return std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / "shardscaler-testenv";
}

void writeFileAtomically(const std::filesystem::path& path, const std::string& content) {
  auto tmp = path;
  tmp += ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    if (!out.flush()) throw std::runtime_error("testenv: cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

void writePrivateFile(const std::filesystem::path& path, const std::string& content) {
  writeFileAtomically(path, content);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

WorkDir::WorkDir(const std::filesystem::path& requested) {
  if (requested.empty()) {
    const auto root = testenvRoot();
    std::filesystem::create_directories(root);
    std::string pattern = (root / "cp-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    path_ = pattern;
    owned_ = true;
  } else {
    path_ = std::filesystem::absolute(requested).lexically_normal();
    std::filesystem::create_directories(path_);
    if (pid_t owner = liveOwner(path_ / "owner"); owner != 0 && owner != getpid()) {
      throw std::runtime_error("testenv: " + path_.string() + " is in use by process " +
                               std::to_string(owner));
    }
    // Left over from a run that was killed: a stale etcd member would not start on new ports.
    std::filesystem::remove_all(etcdDataDir());
  }
  writeFileAtomically(path_ / "owner", ownerMark(getpid()));
  std::filesystem::create_directories(logDir());
}

WorkDir::~WorkDir() {
  std::error_code ec;
  if (owned_ && !keep_) {
    std::filesystem::remove_all(path_, ec);
  } else {
    // etcd preallocates 64 MB of WAL; logs and certificates are what a person looks at later.
    std::filesystem::remove_all(etcdDataDir(), ec);
    std::filesystem::remove(path_ / "pids", ec);
    std::filesystem::remove(path_ / "owner", ec);
    if (keep_) {
      // Tells sweep.sh this ownerless directory is kept on purpose (for a week).
      std::ofstream(path_ / "kept") << "kept for inspection\n";
      std::cerr << "testenv: kept the control plane's files in " << path_ << "\n";
    }
  }
  if (ec) std::cerr << "testenv: warning: cleaning " << path_ << ": " << ec.message() << "\n";
}

void WorkDir::recordPids(const std::vector<std::pair<std::string, pid_t>>& servers) const {
  std::string content;
  for (const auto& [name, pid] : servers) content += name + " " + std::to_string(pid) + "\n";
  writeFileAtomically(path_ / "pids", content);
}

}  // namespace shardscaler::testenv::control_plane_detail
