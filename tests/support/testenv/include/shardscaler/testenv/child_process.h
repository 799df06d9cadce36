// Starting and stopping the processes tests run (servers, the operator emulator, shardscaler).
// A child must never outlive the process that started it, even when that one is SIGKILLed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardscaler::testenv {

// A server process in its own process group, started with PR_SET_PDEATHSIG(SIGKILL) so the
// kernel kills it when the thread that forked it exits. Stdout and stderr go to a log file.
class ChildProcess {
 public:
  // Throws std::system_error if fork fails; an exec failure shows as exit code 127 + a log line.
  ChildProcess(std::string name, const std::vector<std::string>& argv,
               const std::vector<std::string>& env, const std::filesystem::path& log_file);
  ~ChildProcess();  // stop(): SIGTERM, bounded wait, SIGKILL
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }
  const std::filesystem::path& logFile() const { return log_file_; }

  // Reaps the child if it has exited; returns its wait status then, nullopt while it runs.
  std::optional<int> exitStatus();
  // Sends SIGTERM to the process group (not waiting).
  void terminate();
  // SIGTERM, then waits up to `grace`; SIGKILLs the whole process group after that and reaps.
  void stop(std::chrono::milliseconds grace);

 private:
  std::string name_;
  std::filesystem::path log_file_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Resolves `name` on $PATH (or returns it when it contains a '/'); empty when not found.
std::filesystem::path findExecutable(const std::string& name);

// This process's environment, for a child that should see what the test sees.
std::vector<std::string> inheritedEnvironment();

// Describes a wait status ("exited with code 1", "killed by signal 9").
std::string describeWaitStatus(int status);

struct CommandResult {
  int exit_code = -1;  // -1 if it had to be killed at the deadline
  std::string out;
  std::string err;
};

// Runs a short-lived command to completion (killed at `timeout`), feeding `input` on stdin.
CommandResult runCommand(const std::vector<std::string>& argv, const std::string& input,
                         std::chrono::milliseconds timeout);

// Throws std::logic_error unless called on the process's main thread: PR_SET_PDEATHSIG fires
// when the forking *thread* exits, so only the main thread gives children the test's lifetime.
void requireMainThread(const char* what);

}  // namespace shardscaler::testenv
