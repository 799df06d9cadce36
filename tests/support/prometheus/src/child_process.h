// Starting and stopping test server processes: own process group, killed if the test dies.
// Nothing here knows what the process is; it never signals a process it did not start.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardscaler::testenv::prometheus_detail {

// Resolves `name` on $PATH (or returns it when it contains a '/'); empty when not found.
std::filesystem::path findExecutable(const std::string& name);

// fork+exec with stdout/stderr appended to `log`, cwd `dir`, in a new process group, with
// PR_SET_PDEATHSIG=SIGKILL (note: it fires when the *thread* that called this exits, so call
// it from a thread that lives as long as the process should). Throws std::runtime_error.
pid_t spawnProcess(const std::filesystem::path& binary, const std::vector<std::string>& args,
                   const std::filesystem::path& log, const std::filesystem::path& dir);

// The exit status if the child has exited (reaped), nullopt if it is still running.
std::optional<int> pollExit(pid_t pid);

// SIGTERM to the group, SIGKILL to the group after `grace`; reaps the child.
void stopProcessGroup(pid_t pid, std::chrono::milliseconds grace);

// The last `max_bytes` of a file, for error messages.
std::string fileTail(const std::filesystem::path& path, size_t max_bytes);

}  // namespace shardscaler::testenv::prometheus_detail
