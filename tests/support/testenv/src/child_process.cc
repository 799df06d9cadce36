#include "shardscaler/testenv/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace shardscaler::testenv {
namespace {

using Clock = std::chrono::steady_clock;

// argv/envp arrays must exist before fork: the child of a threaded process may only make
// async-signal-safe calls, so it cannot allocate.
class CStringArray {
 public:
  explicit CStringArray(const std::vector<std::string>& strings) : strings_(strings) {
    for (auto& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char* const* get() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

[[noreturn]] void throwErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Everything the child does between fork and exec: async-signal-safe calls only.
void becomeOrphanProofChild(pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died between fork and prctl; then no signal would ever come.
  if (getppid() != parent) _exit(126);
  // Inherited ignored signals (e.g. SIGINT in a backgrounded shell job) would survive exec.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

void writeExecFailure(const char* path) {
  const char* prefix = "testenv: exec failed: ";
  const char* reason = strerror(errno);  // not async-signal-safe in theory; glibc's is
  (void)!write(2, prefix, strlen(prefix));
  (void)!write(2, path, strlen(path));
  (void)!write(2, ": ", 2);
  (void)!write(2, reason, strlen(reason));
  (void)!write(2, "\n", 1);
}

bool waitForExit(pid_t pid, std::optional<int>& status, Clock::time_point deadline) {
  while (true) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      status = st;
      return true;
    }
    if (r < 0 && errno == ECHILD) {
      status = 0;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

void requireMainThread(const char* what) {
  if (gettid() != getpid()) {
    throw std::logic_error(std::string(what) +
                           " must run on the main thread: its servers are bound to the "
                           "lifetime of the thread that starts them (PR_SET_PDEATHSIG)");
  }
}

ChildProcess::ChildProcess(std::string name, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env,
                           const std::filesystem::path& log_file)
    : name_(std::move(name)), log_file_(log_file) {
  CStringArray args(argv);
  CStringArray envp(env);
  int log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throwErrno("open " + log_file.string());
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    close(log_fd);
    throwErrno("open /dev/null");
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    close(null_fd);
    throwErrno("fork for " + name_);
  }
  if (pid == 0) {
    becomeOrphanProofChild(parent);
    dup2(null_fd, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    close_range(3, ~0U, 0);
    execve(args.get()[0], args.get(), envp.get());
    writeExecFailure(args.get()[0]);
    _exit(127);
  }
  setpgid(pid, pid);  // also done by the child; whichever runs first wins the race harmlessly
  close(log_fd);
  close(null_fd);
  pid_ = pid;
}

ChildProcess::~ChildProcess() { stop(std::chrono::seconds(10)); }

std::optional<int> ChildProcess::exitStatus() {
  if (!status_) waitForExit(pid_, status_, Clock::now());
  return status_;
}

void ChildProcess::terminate() {
  if (!exitStatus()) kill(-pid_, SIGTERM);
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || exitStatus()) return;
  kill(-pid_, SIGTERM);
  if (waitForExit(pid_, status_, Clock::now() + grace)) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  // SIGKILL cannot be ignored; the bound only guards against an unkillable (D-state) process.
  waitForExit(pid_, status_, Clock::now() + std::chrono::seconds(10));
}

std::filesystem::path findExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::vector<std::string> inheritedEnvironment() {
  std::vector<std::string> env;
  for (char** var = environ; *var != nullptr; ++var) env.emplace_back(*var);
  return env;
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

CommandResult runCommand(const std::vector<std::string>& argv, const std::string& input,
                         std::chrono::milliseconds timeout) {
  CStringArray args(argv);
  // stdin is a socket so a child that exits early makes send() fail with EPIPE instead of
  // raising SIGPIPE in the test process.
  int in[2], out[2], err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) throwErrno("socketpair");
  if (pipe2(out, O_CLOEXEC) != 0) throwErrno("pipe");
  if (pipe2(err, O_CLOEXEC) != 0) throwErrno("pipe");
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throwErrno("fork for " + argv.front());
  if (pid == 0) {
    becomeOrphanProofChild(parent);
    dup2(in[1], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close_range(3, ~0U, 0);
    execve(args.get()[0], args.get(), environ);
    writeExecFailure(args.get()[0]);
    _exit(127);
  }
  close(in[1]);
  close(out[1]);
  close(err[1]);
  for (int fd : {in[0], out[0], err[0]}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (input.empty()) shutdown(in[0], SHUT_WR);

  CommandResult result;
  const auto deadline = Clock::now() + timeout;
  size_t written = 0;
  bool in_open = !input.empty(), out_open = true, err_open = true;
  bool timed_out = false;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3] = {{in_open ? in[0] : -1, POLLOUT, 0},
                     {out_open ? out[0] : -1, POLLIN, 0},
                     {err_open ? err[0] : -1, POLLIN, 0}};
    if (poll(fds, 3, static_cast<int>(left)) < 0 && errno != EINTR) break;
    if (in_open && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = send(in[0], input.data() + written, input.size() - written, MSG_NOSIGNAL);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EAGAIN) || written == input.size()) {
        shutdown(in[0], SHUT_WR);
        in_open = false;
      }
    }
    char buf[8192];
    for (auto [idx, open_flag, sink] :
         {std::tuple{1, &out_open, &result.out}, std::tuple{2, &err_open, &result.err}}) {
      if (!*open_flag || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[idx].fd, buf, sizeof buf);
      if (n > 0) {
        sink->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EAGAIN) {
        *open_flag = false;
      }
    }
  }
  if (timed_out) kill(-pid, SIGKILL);
  std::optional<int> status;
  // After EOF on both pipes the child is exiting; the bound covers a child that closed them
  // early and lingers (killed at the deadline).
  if (!waitForExit(pid, status, timed_out ? Clock::now() + std::chrono::seconds(10) : deadline)) {
    kill(-pid, SIGKILL);
    timed_out = true;
    waitForExit(pid, status, Clock::now() + std::chrono::seconds(10));
  }
  for (int fd : {in[0], out[0], err[0]}) close(fd);
  if (timed_out) {
    result.exit_code = -1;
    result.err +=
        "\ntestenv: " + argv.front() + " killed after " + std::to_string(timeout.count()) + " ms";
  } else if (status && WIFEXITED(*status)) {
    result.exit_code = WEXITSTATUS(*status);
  } else {
    result.exit_code = -1;
    if (status) result.err += "\ntestenv: " + argv.front() + " " + describeWaitStatus(*status);
  }
  return result;
}

}  // namespace shardscaler::testenv
