#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace shardscaler::testenv::prometheus_detail {

std::filesystem::path findExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

pid_t spawnProcess(const std::filesystem::path& binary, const std::vector<std::string>& args,
                   const std::filesystem::path& log, const std::filesystem::path& dir) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argv_storage;
  argv_storage.push_back(binary.string());
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    throw std::runtime_error("cannot open " + log.string() + ": " + std::strerror(errno));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const std::string dir_string = dir.string();
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);  // the parent died before prctl took effect
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    if (::chdir(dir_string.c_str()) != 0) ::_exit(125);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we ever signal it
  ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  return pid;
}

std::optional<int> pollExit(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  if (r < 0) return -1;  // not our child any more (already reaped)
  return status;
}

void stopProcessGroup(pid_t pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  ::kill(-pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pollExit(pid)) {
      ::kill(-pid, SIGKILL);  // anything the process left behind in its group
      return;
    }
    // Polling a child's exit: waitpid has no timeout, and a SIGCHLD handler would be global.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

std::string fileTail(const std::filesystem::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log at " + path.string() + ")";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  const size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string out(size - start, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

}  // namespace shardscaler::testenv::prometheus_detail
