#include "shardscaler/e2e/shardscaler_process.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {

ShardscalerProcess::ShardscalerProcess(ShardscalerOptions options) : options_(std::move(options)) {
  start();
}

ShardscalerProcess::~ShardscalerProcess() {
  if (process_) process_->stop(std::chrono::seconds(15));
}

std::filesystem::path ShardscalerProcess::binary() { return SHARDSCALER_BINARY; }

void ShardscalerProcess::start(const std::vector<std::string>& extra_env) {
  if (process_ && !process_->exitStatus()) throw std::logic_error("shardscaler is running");
  const auto ports = testenv::pickFreePorts(2);
  metrics_port_ = static_cast<uint16_t>(ports[0]);
  probe_port_ = static_cast<uint16_t>(ports[1]);
  std::vector<std::string> argv = {
      options_.binary.empty() ? binary().string() : options_.binary.string(),
      "run",
      "--kubeconfig=" + options_.kubeconfig.string(),
      "--metrics-bind-address=127.0.0.1:" + std::to_string(metrics_port_),
      "--health-probe-bind-address=127.0.0.1:" + std::to_string(probe_port_),
      std::string("--leader-elect=") + (options_.leader_elect ? "true" : "false"),
  };
  for (const auto& ns : options_.namespaces) argv.push_back("--namespace=" + ns);
  if (options_.leader_elect && !options_.leader_election_namespace.empty()) {
    argv.push_back("--leader-election-namespace=" + options_.leader_election_namespace);
  }
  if (!options_.identity.empty()) argv.push_back("--identity=" + options_.identity);
  // The shard guard listens on :9443 by default; a test that wants it says where (and the flags
  // that go with it), all others run without it.
  const bool guard_asked = std::ranges::any_of(options_.extra_args, [](const std::string& a) {
    return a.starts_with("--webhook-bind-address");
  });
  if (!guard_asked) argv.emplace_back("--webhook-bind-address=0");
  // Without the guard, transitions wait out the fallback's settle time; the emulator's view does
  // not lag unless a test says so, so a second is plenty and keeps the stories short.
  const bool settle_asked = std::ranges::any_of(
      options_.extra_args, [](const std::string& a) { return a.starts_with("--settle-time"); });
  if (!settle_asked) argv.emplace_back("--settle-time=1s");
  // No kubelet runs the shards' pods, so the survivors never report a reload and a drained shard
  // goes once the floor passed: 10 s, unless a test whose shards are real processes asks for more.
  const bool floor_asked = std::ranges::any_of(options_.extra_args, [](const std::string& a) {
    return a.starts_with("--drain-reload-floor");
  });
  if (!floor_asked) argv.emplace_back("--drain-reload-floor=10s");
  // The tests' Prometheus servers listen on loopback, which the default allow-list (the
  // cluster's Services) refuses.
  const bool allow_asked = std::ranges::any_of(options_.extra_args, [](const std::string& a) {
    return a.starts_with("--prometheus-url-allow");
  });
  if (!allow_asked)
    argv.emplace_back("--prometheus-url-allow=http://127.0.0.1:*,https://127.0.0.1:*");
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=/tmp"};
  env.insert(env.end(), options_.extra_env.begin(), options_.extra_env.end());
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  process_ = std::make_unique<testenv::ChildProcess>("shardscaler", argv, env, options_.log_file);
}

void ShardscalerProcess::kill9() {
  if (!process_) return;
  if (!process_->exitStatus()) ::kill(process_->pid(), SIGKILL);
  for (int i = 0; i < 500 && !process_->exitStatus(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<int> ShardscalerProcess::terminate(std::chrono::milliseconds grace) {
  if (!process_) return std::nullopt;
  if (!process_->exitStatus()) ::kill(process_->pid(), SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!process_->exitStatus() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (auto status = process_->exitStatus()) return status;
  process_->stop(std::chrono::milliseconds(0));
  return std::nullopt;
}

bool ShardscalerProcess::running() { return process_ && !process_->exitStatus(); }

pid_t ShardscalerProcess::pid() const { return process_ ? process_->pid() : -1; }

std::pair<int, std::string> ShardscalerProcess::httpGet(uint16_t port,
                                                        const std::string& path) const {
  auto got = test_kit::httpGet("http://127.0.0.1:" + std::to_string(port) + path,
                               {.timeout = std::chrono::milliseconds(5000)});
  return {static_cast<int>(got.status), std::move(got.body)};
}

std::string ShardscalerProcess::logTail(std::size_t max_bytes) const {
  std::ifstream in(options_.log_file);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  return text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
}

}  // namespace shardscaler::e2e
