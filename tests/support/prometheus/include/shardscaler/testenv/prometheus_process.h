// One real `prometheus` process (Debian's binary) for tests: loopback, a free port, its own
// data dir; started in its own process group and killed with the test process if that dies.
// It never binds anything but a loopback address and never outlives the object (or the test
// process).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscaler::testenv {

struct PrometheusOptions {
  // Names the work dir and error messages ("shard-1", "scraper").
  std::string name = "prometheus";
  // prometheus.yml. Every "@SELF@" is replaced by this process's own 127.0.0.1:<port>, so a
  // config can scrape the process itself before its port is known.
  std::string config_yaml = "global: {scrape_interval: 15s}\n";
  // --web.config.file contents (TLS, basic auth); none when empty. When it enables TLS, set
  // `https`; when it requires basic auth, give the credentials for the readiness probe.
  std::string web_config_yaml{};
  bool https = false;
  std::optional<std::pair<std::string, std::string>> probe_basic_auth{};
  // --enable-feature=agent: no local TSDB and no query API.
  bool agent = false;
  std::vector<std::string> extra_flags{};
  // Data, config and log live here; a fresh temporary dir (removed afterwards) when empty.
  std::filesystem::path work_dir{};
  // Start-up must reach /-/ready within this.
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(60)};
  // The binary; $SHARDSCALER_PROMETHEUS, else `prometheus` on $PATH, when empty.
  std::filesystem::path binary{};
  // Where it listens: a loopback address (all of 127.0.0.0/8 is loopback on Linux) and a port, a
  // free one when 0. A given port that is taken fails the start.
  std::string host = "127.0.0.1";
  int port = 0;
};

// The child gets PR_SET_PDEATHSIG=SIGKILL, which fires when the *thread* that started it exits:
// create (and restart()) these from a thread that outlives them, e.g. the test's main thread.
class PrometheusProcess {
 public:
  // Starts the process and waits for /-/ready. Throws std::runtime_error, with the tail of the
  // process's log, when it exits or is not ready in time.
  explicit PrometheusProcess(PrometheusOptions options);
  ~PrometheusProcess();  // stops the process; removes a temporary work dir
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;

  int port() const;
  const std::string& host() const;
  std::string address() const;  // <host>:<port>
  std::string url() const;      // http(s)://127.0.0.1:<port>
  const std::string& name() const;
  const std::filesystem::path& workDir() const;
  std::filesystem::path logPath() const;
  std::string logTail(size_t max_bytes = 4000) const;

  bool running() const;
  pid_t pid() const;  // 0 when stopped
  // SIGTERM to the process group, SIGKILL after `grace`; waits for the exit. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Starts again on the same port with the same data (after stop()); waits for /-/ready.
  void restart();
  // Replaces prometheus.yml (also for later restarts) and has the running process reload it
  // (SIGHUP); returns once /metrics reports a successful reload after this call. Throws
  // std::runtime_error when it is not running, the reload fails or is not seen within `timeout`.
  void reload(const std::string& config_yaml,
              std::chrono::milliseconds timeout = std::chrono::seconds(30));

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardscaler::testenv
