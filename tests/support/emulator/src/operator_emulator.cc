#include "shardscaler/testenv/operator_emulator.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "prometheus_config.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/test_kit/eventually.h"

#ifndef SHARDSCALER_OPERATOR_EMULATOR_BINARY
#error "SHARDSCALER_OPERATOR_EMULATOR_BINARY must name the operator-emulator binary"
#endif

namespace shardscaler::testenv {

namespace {

using namespace std::chrono_literals;

std::optional<int> optionalInt(const nlohmann::json& line, const char* field) {
  auto it = line.find(field);
  if (it == line.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}

}  // namespace

std::filesystem::path operatorEmulatorBinary() { return SHARDSCALER_OPERATOR_EMULATOR_BINARY; }

std::string decodeConfigSecretData(const std::string& base64_gzip) {
  auto compressed = k8s::base64Decode(base64_gzip);
  if (!compressed) throw std::runtime_error("config secret: invalid base64");
  auto text = emulator::gzipDecompress(*compressed);
  if (!text) throw std::runtime_error("config secret: " + text.error().message);
  return *text;
}

std::vector<EmulatorAction> readActionLog(const std::filesystem::path& path) {
  std::vector<EmulatorAction> actions;
  std::ifstream in(path, std::ios::binary);
  if (!in) return actions;
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // an unterminated last line is still being written
    const std::string line_text = text.substr(start, end - start);
    start = end + 1;
    if (line_text.empty()) continue;
    nlohmann::json line;
    try {
      line = nlohmann::json::parse(line_text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("action log " + path.string() + ": bad line: " + line_text);
    }
    EmulatorAction action;
    action.time = line.value("time", "");
    action.verb = line.value("verb", "");
    action.kind = line.value("kind", "");
    action.ns = line.value("namespace", "");
    action.name = line.value("name", "");
    action.shard = optionalInt(line, "shard");
    action.subresource = line.value("subresource", "");
    action.owner = line.value("owner", "");
    action.reason = line.value("reason", "");
    action.outcome = line.value("outcome", "");
    if (auto it = line.find("generation"); it != line.end() && it->is_number_integer()) {
      action.generation = it->get<long long>();
    }
    action.denied_by = line.value("denied_by", "");
    action.webhook_failed = line.value("webhook_failed", "");
    if (action.verb.empty()) {
      throw std::runtime_error("action log " + path.string() + ": no verb: " + line_text);
    }
    action.raw = std::move(line);
    actions.push_back(std::move(action));
  }
  return actions;
}

OperatorEmulator::OperatorEmulator(OperatorEmulatorOptions options) {
  if (options.kubeconfig.empty()) throw std::invalid_argument("OperatorEmulator: no kubeconfig");
  if (options.work_dir.empty()) {
    owned_work_dir_.emplace("operator-emulator-");
    work_dir_ = owned_work_dir_->path();
  } else {
    work_dir_ = options.work_dir;
    std::filesystem::create_directories(work_dir_);
  }
  action_log_ = work_dir_ / "action.log";
  log_file_ = work_dir_ / "emulator.log";
  std::filesystem::remove(action_log_);

  std::vector<std::string> args{operatorEmulatorBinary().string(),
                                "--kubeconfig",
                                options.kubeconfig.string(),
                                "--action-log",
                                action_log_.string(),
                                "--workers",
                                std::to_string(options.workers)};
  for (const auto& ns : options.namespaces) {
    args.emplace_back("--namespace");
    args.push_back(ns);
  }
  if (options.resync_period) {
    args.emplace_back("--resync-period");
    args.push_back(std::to_string(options.resync_period->count()) + "ms");
  }
  auto duration = [&args](const char* flag, std::chrono::milliseconds value) {
    if (value.count() == 0) return;
    args.emplace_back(flag);
    args.push_back(std::to_string(value.count()) + "ms");
  };
  duration("--statefulset-lag", options.statefulset_lag);
  duration("--target-lag", options.target_lag);
  duration("--sync-latency", options.sync_latency);
  duration("--sync-latency-jitter", options.sync_latency_jitter);
  if (options.sync_latency_jitter.count() > 0) {
    args.emplace_back("--seed");
    args.push_back(std::to_string(options.seed));
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int log_fd = ::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::system_error(errno, std::generic_category(), "open log");
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    ::close(log_fd);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    setpgid(0, 0);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(log_fd);

  const auto deadline = std::chrono::steady_clock::now() + options.start_timeout;
  while (true) {
    bool ready = false;
    for (const auto& action : actions()) ready = ready || action.verb == "ready";
    if (ready) return;
    if (!running()) {
      throw std::runtime_error("operator-emulator exited during start-up (" +
                               std::to_string(*status_) + "); log:\n" + logTail());
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string tail = logTail();
      stop(2s);
      throw std::runtime_error("operator-emulator not ready within " +
                               std::to_string(options.start_timeout.count()) + "s; log:\n" + tail);
    }
    std::this_thread::sleep_for(50ms);  // polling interval of a bounded wait
  }
}

OperatorEmulator::~OperatorEmulator() { stop(); }  // then owned_work_dir_ goes, after the child

void OperatorEmulator::keepWorkDir() {
  if (owned_work_dir_) owned_work_dir_->keep();
}

bool OperatorEmulator::running() {
  if (status_ || pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

int OperatorEmulator::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return 0;
  if (!running()) return *status_;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      status_ = status;
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  return *status_;
}

bool OperatorEmulator::exitedCleanly(int wait_status) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string OperatorEmulator::logTail(std::size_t max_bytes) const {
  std::ifstream in(log_file_, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

bool OperatorEmulator::waitForAction(
    std::chrono::milliseconds timeout,
    const std::function<bool(const EmulatorAction&)>& match) const {
  return test_kit::eventually(timeout, 50ms, [&] {
    const auto all = actions();
    return std::ranges::any_of(all, match);
  });
}

}  // namespace shardscaler::testenv
