#include "shardscaler/testenv/prometheus_process.h"

#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/test_kit/temp_dir.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::testenv {

namespace {

using test_kit::httpGet;
using test_kit::HttpGetResult;

constexpr int kPortAttempts = 5;

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

// The last `max_bytes` of a file, for error messages.
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

void writeFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The value of an unlabelled series in a /metrics exposition, or nullopt.
std::optional<double> sampleValue(const std::string& exposition, const std::string& series) {
  const std::string prefix = "\n" + series + " ";
  const size_t at = exposition.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(exposition.c_str() + at + prefix.size(), nullptr);
}

}  // namespace

struct PrometheusProcess::State {
  PrometheusOptions options;
  // Declared before `process`, so the directory goes only after the process has stopped.
  std::optional<test_kit::TempDir> temporary_dir;
  std::filesystem::path work_dir;
  std::filesystem::path binary;
  int port = 0;
  std::unique_ptr<ChildProcess> process;  // null when stopped

  std::filesystem::path logPath() const { return work_dir / "prometheus.log"; }
  std::string address() const { return options.host + ":" + std::to_string(port); }
  std::string url() const { return (options.https ? "https://" : "http://") + address(); }

  std::vector<std::string> argv() const {
    std::vector<std::string> a = {
        binary.string(),
        "--config.file=" + (work_dir / "prometheus.yml").string(),
        "--web.listen-address=" + address(),
        "--log.level=info",
    };
    if (options.agent) {
      a.emplace_back("--enable-feature=agent");
      a.push_back("--storage.agent.path=" + (work_dir / "agent-data").string());
    } else {
      a.push_back("--storage.tsdb.path=" + (work_dir / "data").string());
    }
    if (!options.web_config_yaml.empty()) {
      a.push_back("--web.config.file=" + (work_dir / "web.yml").string());
    }
    a.insert(a.end(), options.extra_flags.begin(), options.extra_flags.end());
    return a;
  }

  // Returns "" when ready, else why not; `port_taken` tells the caller to try another port.
  std::string startOnce(bool* port_taken) {
    *port_taken = false;
    writeFile(work_dir / "prometheus.yml", replaceAll(options.config_yaml, "@SELF@", address()));
    if (!options.web_config_yaml.empty()) writeFile(work_dir / "web.yml", options.web_config_yaml);
    const auto log_size_before =
        std::filesystem::exists(logPath()) ? std::filesystem::file_size(logPath()) : 0;
    process =
        std::make_unique<ChildProcess>(options.name, argv(), inheritedEnvironment(), logPath());

    const auto deadline = std::chrono::steady_clock::now() + options.ready_timeout;
    std::string last_probe;
    while (std::chrono::steady_clock::now() < deadline) {
      if (auto status = process->exitStatus()) {
        process.reset();
        std::error_code ignored;
        const auto size_now = std::filesystem::file_size(logPath(), ignored);
        const std::string this_run =
            size_now > log_size_before ? fileTail(logPath(), size_now - log_size_before) : "";
        *port_taken = this_run.find("address already in use") != std::string::npos;
        return describeWaitStatus(*status) + " before it was ready";
      }
      HttpGetResult probe = httpGet(url() + "/-/ready", {.basic_auth = options.probe_basic_auth});
      if (probe.status == 200) return {};
      last_probe = probe.status != 0 ? "HTTP " + std::to_string(probe.status) : probe.error;
      // Polls the readiness endpoint until the deadline; there is no event to wait on.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    process->stop(std::chrono::seconds(5));
    process.reset();
    return "not ready within " + std::to_string(options.ready_timeout.count()) +
           "ms (last probe of /-/ready: " + last_probe + ")";
  }

  void start(bool keep_port) {
    std::string why;
    for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
      if (options.port != 0) {
        port = options.port;
      } else if (!keep_port || port == 0) {
        port = pickFreePort();
      }
      bool port_taken = false;
      why = startOnce(&port_taken);
      if (why.empty()) return;
      if (!port_taken || options.port != 0) break;
    }
    throw std::runtime_error("prometheus \"" + options.name + "\" on " + address() + " " + why +
                             "; log " + logPath().string() + " ends with:\n" +
                             fileTail(logPath(), 3000));
  }
};

PrometheusProcess::PrometheusProcess(PrometheusOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  if (!s.options.host.starts_with("127.")) {
    throw std::invalid_argument("prometheus \"" + s.options.name +
                                "\" must listen on loopback, not " + s.options.host);
  }
  if (!s.options.binary.empty()) {
    s.binary = s.options.binary;
  } else if (const char* env = std::getenv("SHARDSCALER_PROMETHEUS"); env != nullptr && *env) {
    s.binary = env;
  } else {
    s.binary = findExecutable("prometheus");
  }
  if (s.binary.empty()) {
    throw std::runtime_error(
        "no prometheus binary on $PATH: install Debian's prometheus package "
        "(or set SHARDSCALER_PROMETHEUS)");
  }
  if (s.options.work_dir.empty()) {
    s.temporary_dir.emplace("shardscaler-prometheus-" + s.options.name + "-");
    if (std::getenv("SHARDSCALER_KEEP_TEST_DIRS") != nullptr) s.temporary_dir->keep();
    s.work_dir = s.temporary_dir->path();
  } else {
    s.work_dir = s.options.work_dir;
    std::filesystem::create_directories(s.work_dir);
  }
  // On a throw, state_ goes with the process stopped first and then the temporary dir.
  s.start(/*keep_port=*/false);
}

PrometheusProcess::~PrometheusProcess() { stop(); }

int PrometheusProcess::port() const { return state_->port; }
const std::string& PrometheusProcess::host() const { return state_->options.host; }
std::string PrometheusProcess::address() const { return state_->address(); }
std::string PrometheusProcess::url() const { return state_->url(); }
const std::string& PrometheusProcess::name() const { return state_->options.name; }
const std::filesystem::path& PrometheusProcess::workDir() const { return state_->work_dir; }
std::filesystem::path PrometheusProcess::logPath() const { return state_->logPath(); }
std::string PrometheusProcess::logTail(size_t max_bytes) const {
  return fileTail(state_->logPath(), max_bytes);
}

bool PrometheusProcess::running() const {
  if (!state_->process) return false;
  if (state_->process->exitStatus()) {
    state_->process.reset();
    return false;
  }
  return true;
}

pid_t PrometheusProcess::pid() const { return state_->process ? state_->process->pid() : 0; }

void PrometheusProcess::stop(std::chrono::milliseconds grace) {
  if (!state_->process) return;
  state_->process->stop(grace);
  state_->process.reset();
}

void PrometheusProcess::restart() {
  stop();
  state_->start(/*keep_port=*/true);
}

void PrometheusProcess::reload(const std::string& config_yaml, std::chrono::milliseconds timeout) {
  State& s = *state_;
  if (!running()) throw std::runtime_error("prometheus \"" + s.options.name + "\" is not running");
  constexpr const char* kReloadedAt = "prometheus_config_last_reload_success_timestamp_seconds";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto scrape = [&] {
    return httpGet(s.url() + "/metrics", {.basic_auth = s.options.probe_basic_auth});
  };
  const auto before = sampleValue(scrape().body, kReloadedAt);
  if (!before)
    throw std::runtime_error("prometheus \"" + s.options.name + "\" has no " + kReloadedAt);
  // The timestamp has whole seconds: a reload within the second of the last one would not show.
  const auto last = std::chrono::system_clock::time_point(
      std::chrono::seconds(static_cast<std::int64_t>(*before)));
  std::this_thread::sleep_until(
      std::max(std::chrono::system_clock::now(), last + std::chrono::milliseconds(1100)));
  s.options.config_yaml = config_yaml;
  writeFile(s.work_dir / "prometheus.yml", replaceAll(config_yaml, "@SELF@", s.address()));
  if (::kill(s.process->pid(), SIGHUP) != 0) {
    throw std::runtime_error("SIGHUP to prometheus \"" + s.options.name + "\" failed");
  }
  std::string last_seen;
  while (std::chrono::steady_clock::now() < deadline) {
    const HttpGetResult r = scrape();
    const auto at = sampleValue(r.body, kReloadedAt);
    const auto ok = sampleValue(r.body, "prometheus_config_last_reload_successful");
    if (at && *at > *before && ok && *ok == 1) return;
    if (ok && *ok == 0) {
      throw std::runtime_error("prometheus \"" + s.options.name +
                               "\" rejected its new configuration; log ends with:\n" +
                               fileTail(s.logPath(), 2000));
    }
    last_seen = r.status != 0 ? "HTTP " + std::to_string(r.status) : r.error;
    // Prometheus reloads on its own goroutine; /metrics is the only sign that it did.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("prometheus \"" + s.options.name + "\" did not reload within " +
                           std::to_string(timeout.count()) + "ms (last /metrics: " + last_seen +
                           ")");
}

}  // namespace shardscaler::testenv
