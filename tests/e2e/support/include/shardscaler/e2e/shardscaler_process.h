// The real `shardscaler` binary as a child of the test, with its log in a file; it can be
// killed with SIGKILL and started again. It never outlives the test process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardscaler::testenv {
class ChildProcess;
}

namespace shardscaler::e2e {

struct ShardscalerOptions {
  std::filesystem::path kubeconfig;
  std::vector<std::string> namespaces;  // --namespace; empty = all
  bool leader_elect = false;
  std::string leader_election_namespace;  // when leader_elect
  std::string identity;                   // --identity when set
  // Appended to `shardscaler run`. Without a --webhook-bind-address among them the shard guard
  // is off (--webhook-bind-address=0); without a --prometheus-url-allow... Prometheus servers on
  // 127.0.0.1 may be queried.
  std::vector<std::string> extra_args;
  std::vector<std::string> extra_env;  // "NAME=value", beside PATH and HOME
  std::filesystem::path log_file;      // every start appends to it
  // Another build of shardscaler (a benchmark's baseline); empty: binary().
  std::filesystem::path binary;
};

class ShardscalerProcess {
 public:
  // Starts `shardscaler run` on free loopback ports for /metrics and the probes.
  explicit ShardscalerProcess(ShardscalerOptions options);
  ~ShardscalerProcess();  // SIGTERM, then SIGKILL after 15 s
  ShardscalerProcess(const ShardscalerProcess&) = delete;
  ShardscalerProcess& operator=(const ShardscalerProcess&) = delete;

  static std::filesystem::path binary();

  // (Re)starts the process; extra_env adds to the options' environment for this start only.
  void start(const std::vector<std::string>& extra_env = {});
  // SIGKILL and reap: the crash of the crash-safety tests.
  void kill9();
  // SIGTERM, and the wait status once it exited (nullopt if it had to be killed after `grace`).
  std::optional<int> terminate(std::chrono::milliseconds grace);
  bool running();
  pid_t pid() const;

  uint16_t metricsPort() const { return metrics_port_; }
  uint16_t probePort() const { return probe_port_; }
  // GET http://127.0.0.1:<port><path>; {HTTP status, body}, status 0 when nothing answered.
  std::pair<int, std::string> httpGet(uint16_t port, const std::string& path) const;
  std::string logTail(std::size_t max_bytes = 8000) const;
  const std::filesystem::path& logFile() const { return options_.log_file; }

 private:
  ShardscalerOptions options_;
  uint16_t metrics_port_ = 0;
  uint16_t probe_port_ = 0;
  std::unique_ptr<testenv::ChildProcess> process_;
};

}  // namespace shardscaler::e2e
