// kube-testenv: runs the test control plane in the foreground for people and shell scripts.
//   kube-testenv up --dir DIR [--ready-file FILE] [--no-controller-manager]
//                   [--apiserver-flag FLAG]... [--controller-manager-flag FLAG]...
//                   [--start-timeout SECONDS]
// Starts etcd, kube-apiserver and kube-controller-manager, writes DIR/testenv.env, prints the
// kubeconfig path, and stops everything on SIGTERM, SIGINT or SIGHUP (exit 0), or when a server
// dies (exit 1).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/process_table.h"

namespace {

using shardscaler::testenv::ControlPlane;
using shardscaler::testenv::ControlPlaneOptions;

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

int usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "kube-testenv: " << problem << "\n";
  std::cerr << "usage: kube-testenv up --dir DIR [--ready-file FILE] [--no-controller-manager]\n"
               "                       [--apiserver-flag FLAG]... [--controller-manager-flag "
               "FLAG]...\n"
               "                       [--start-timeout SECONDS]\n";
  return 2;
}

sigset_t stopSignalSet() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kStopSignals) sigaddset(&set, sig);
  return set;
}

// Stop signals are blocked from the start and taken with sigtimedwait, so one that arrives during
// start-up is noticed there (ControlPlaneOptions::interrupted) and never kills us mid-way.
void takeOverStopSignals() {
  // A shell starts background jobs with SIGINT ignored; the disposition is reset so the signal is
  // delivered to sigtimedwait rather than dropped.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : kStopSignals) sigaction(sig, &dfl, nullptr);
  sigset_t set = stopSignalSet();
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

bool stopSignalPending() {
  sigset_t pending;
  sigpending(&pending);
  for (int sig : kStopSignals) {
    if (sigismember(&pending, sig)) return true;
  }
  return false;
}

void writeReadyFile(const std::filesystem::path& path, const std::string& content) {
  auto tmp = path;
  tmp += ".tmp";
  std::ofstream(tmp) << content;
  std::filesystem::rename(tmp, path);
}

int up(const std::vector<std::string>& args) {
  ControlPlaneOptions options;
  std::filesystem::path ready_file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--dir") {
      options.work_dir = value();
    } else if (arg == "--ready-file") {
      ready_file = std::filesystem::absolute(value());
    } else if (arg == "--no-controller-manager") {
      options.start_controller_manager = false;
    } else if (arg == "--apiserver-flag") {
      options.extra_apiserver_flags.push_back(value());
    } else if (arg == "--controller-manager-flag") {
      options.extra_controller_manager_flags.push_back(value());
    } else if (arg == "--start-timeout") {
      options.start_timeout = std::chrono::seconds(std::stoi(value()));
    } else {
      return usage("unknown argument " + arg);
    }
  }
  if (options.work_dir.empty()) return usage("--dir is required");
  options.interrupted = stopSignalPending;

  const auto started = std::chrono::steady_clock::now();
  ControlPlane plane(std::move(options));
  const auto startup = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  const auto env_file = plane.workDir() / "testenv.env";
  plane.writeEnvFile(env_file);
  std::cout << "kube-testenv: control plane ready at " << plane.server() << " in "
            << startup.count() << " ms\n"
            << "kubeconfig: " << plane.kubeconfigPath().string() << "\n"
            << "env file:   " << env_file.string() << "\n"
            << "try:        kubectl --kubeconfig " << plane.kubeconfigPath().string() << " get ns\n"
            << "stop with SIGTERM or Ctrl-C" << std::endl;
  if (!ready_file.empty()) writeReadyFile(ready_file, plane.kubeconfigPath().string() + "\n");

  const sigset_t set = stopSignalSet();
  const timespec poll_interval{1, 0};
  int exit_code = 0;
  while (true) {
    int sig = sigtimedwait(&set, nullptr, &poll_interval);
    if (sig > 0) {
      std::cout << "kube-testenv: " << strsignal(sig) << ", stopping" << std::endl;
      break;
    }
    bool all_alive = true;
    for (pid_t pid : plane.serverPids())
      all_alive = all_alive && shardscaler::testenv::processAlive(pid);
    if (!all_alive) {
      std::cerr << "kube-testenv: a server exited; logs in " << (plane.workDir() / "logs").string()
                << std::endl;
      plane.keepWorkDir();
      exit_code = 1;
      break;
    }
  }
  if (!ready_file.empty()) std::filesystem::remove(ready_file);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  takeOverStopSignals();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] != "up")
    return usage(args.empty() ? "" : "unknown command " + args[0]);
  try {
    return up({args.begin() + 1, args.end()});
  } catch (const std::exception& e) {
    std::cerr << "kube-testenv: " << e.what() << std::endl;
    return 1;
  }
}
