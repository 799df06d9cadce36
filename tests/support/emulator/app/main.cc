// operator-emulator: the Prometheus Operator emulator the shardscaler tests start (docs/design.md,
// docs/design/testing.md). Runs until SIGTERM or SIGINT; see --help.
#include <pthread.h>
#include <signal.h>

#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "action_log.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "target_controller.h"
#include "target_kind.h"

namespace {

using namespace std::chrono_literals;
using shardscaler::emulator::ActionLog;
using shardscaler::emulator::TargetController;
using shardscaler::emulator::TargetControllerOptions;

constexpr const char* kUsage = R"(usage: operator-emulator [flags]

Emulates the Prometheus Operator (v0.93) for Prometheus (monitoring.coreos.com/v1) and
PrometheusAgent (monitoring.coreos.com/v1alpha1) objects: shard StatefulSets, the shared config
Secret, the governing Service and status. Runs until SIGTERM or SIGINT, then exits 0.

  --kubeconfig PATH          kubeconfig (default: $KUBECONFIG, else in-cluster)
  --namespace NS             watch only NS (repeatable; default: all namespaces)
  --action-log FILE          append one JSON line per write, sync and start-up (default: none)
  --workers N                reconcile workers per kind (default 1, as the operator)
  --resync-period D          queue every target for reconcile every D; 0 = never (default 5m)
  --status-poll-period D     refresh the status of not-yet-available targets (default 1m)
  --sync-timeout D           give up (exit 1) if the caches do not sync in D (default 60s)
  --controller-id ID         only manage objects whose operator.prometheus.io/controller-id is ID
  --statefulset-lag D        the StatefulSet cache trails the API server by D, as an informer
                             under load: every event is seen D after it arrived (0..2s; default 0)
  --target-lag D             the same for the Prometheus/PrometheusAgent cache (0..2s; default 0)
  --sync-latency D           a busy operator: each sync holds D after reading the target and
                             before acting on it (0..60s; default 0)
  --sync-latency-jitter D    plus a uniform random 0..D per sync (0..60s; default 0)
  --seed N                   seed of the jitter's random numbers (default 1)
  --shard-retention BOOL     the PrometheusShardRetentionPolicy feature gate, on by default as in
                             v0.92+: Prometheus targets with shardRetentionPolicy.whenScaled
                             Retain keep excess shards until operator.prometheus.io/
                             deletion-deadline (default true; false: older operators)
  --log-level LEVEL          debug | info | warn | error (default info)
Durations: 250ms, 2s, 5m, 1h, or 0.
)";

struct Flags {
  std::string kubeconfig;
  std::vector<std::string> namespaces;
  std::string action_log;
  int workers = 1;
  std::chrono::milliseconds resync_period = 5min;
  std::chrono::milliseconds status_poll_period = 1min;
  std::chrono::milliseconds sync_timeout = 60s;
  std::string controller_id;
  std::chrono::milliseconds statefulset_lag = 0ms;
  std::chrono::milliseconds target_lag = 0ms;
  std::chrono::milliseconds sync_latency = 0ms;
  std::chrono::milliseconds sync_latency_jitter = 0ms;
  std::uint64_t seed = 1;
  bool shard_retention = true;
  std::string log_level = "info";
};

constexpr auto kMaxLag = 2s;
constexpr auto kMaxSyncLatency = 60s;

bool parseDuration(const std::string& text, std::chrono::milliseconds& out) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value < 0) return false;
  const std::string unit(end, text.data() + text.size());
  if (unit == "ms") {
    out = std::chrono::milliseconds(value);
  } else if (unit == "s") {
    out = std::chrono::seconds(value);
  } else if (unit == "m") {
    out = std::chrono::minutes(value);
  } else if (unit == "h") {
    out = std::chrono::hours(value);
  } else if (unit.empty() && value == 0) {
    out = 0ms;
  } else {
    return false;
  }
  return true;
}

// Exits 2 with a message on a bad command line.
Flags parseFlags(int argc, char** argv) {
  Flags flags;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "operator-emulator: %s\n\n%s", message.c_str(), kUsage);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) fail(arg + " needs a value");
      return argv[++i];
    };
    auto duration = [&](std::chrono::milliseconds& out,
                        std::chrono::milliseconds max = std::chrono::milliseconds::max()) {
      std::string text = next();
      if (!parseDuration(text, out)) {
        std::string message = "bad duration for ";
        message.append(arg).append(": ").append(text);
        fail(message);
      }
      if (out > max) {
        std::string message = arg;
        message.append(" must be at most ").append(std::to_string(max.count()));
        message.append("ms, not ").append(text);
        fail(message);
      }
    };
    if (arg == "--kubeconfig") {
      flags.kubeconfig = next();
    } else if (arg == "--namespace") {
      flags.namespaces.push_back(next());
    } else if (arg == "--action-log") {
      flags.action_log = next();
    } else if (arg == "--workers") {
      std::string text = next();
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), flags.workers);
      if (ec != std::errc() || end != text.data() + text.size() || flags.workers < 1) {
        fail("--workers must be a positive integer");
      }
    } else if (arg == "--resync-period") {
      duration(flags.resync_period);
    } else if (arg == "--status-poll-period") {
      duration(flags.status_poll_period);
    } else if (arg == "--sync-timeout") {
      duration(flags.sync_timeout);
    } else if (arg == "--controller-id") {
      flags.controller_id = next();
    } else if (arg == "--statefulset-lag") {
      duration(flags.statefulset_lag, kMaxLag);
    } else if (arg == "--target-lag") {
      duration(flags.target_lag, kMaxLag);
    } else if (arg == "--sync-latency") {
      duration(flags.sync_latency, kMaxSyncLatency);
    } else if (arg == "--sync-latency-jitter") {
      duration(flags.sync_latency_jitter, kMaxSyncLatency);
    } else if (arg == "--seed") {
      std::string text = next();
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), flags.seed);
      if (ec != std::errc() || end != text.data() + text.size()) {
        fail("--seed must be a non-negative integer, not " + text);
      }
    } else if (arg == "--shard-retention") {
      const std::string text = next();
      if (text != "true" && text != "false") fail("--shard-retention must be true or false");
      flags.shard_retention = text == "true";
    } else if (arg == "--log-level") {
      flags.log_level = next();
    } else {
      fail("unknown flag " + arg);
    }
  }
  return flags;
}

// SIGTERM/SIGINT are blocked in every thread and taken by one thread with sigwait.
class ShutdownSignal {
 public:
  ShutdownSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGUSR1);  // only to wake the waiting thread when exiting without a signal
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);  // before any other thread starts
    thread_ = std::thread([this] {
      int signal = 0;
      sigwait(&set_, &signal);
      {
        std::lock_guard lock(mutex_);
        received_ = signal;
      }
      cv_.notify_all();
    });
  }
  ~ShutdownSignal() {
    if (thread_.joinable()) {
      if (!requested()) pthread_kill(thread_.native_handle(), SIGUSR1);
      thread_.join();
    }
  }
  bool requested() {
    std::lock_guard lock(mutex_);
    return received_ != 0;
  }
  // True if a signal came within `timeout`.
  bool waitFor(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return received_ != 0; });
  }
  int signal() {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  sigset_t set_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int received_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Flags flags = parseFlags(argc, argv);
  auto logger = spdlog::stderr_logger_mt("operator-emulator");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(flags.log_level));

  ShutdownSignal shutdown;
  auto config = shardscaler::k8s::loadKubeConfig(
      shardscaler::k8s::ConfigSources::fromEnvironment(flags.kubeconfig));
  if (!config) {
    spdlog::error("event=config_failed error=\"{}\"", config.error().describe());
    return 1;
  }
  std::unique_ptr<ActionLog> action_log;
  try {
    action_log = std::make_unique<ActionLog>(flags.action_log);
  } catch (const std::exception& e) {
    spdlog::error("event=action_log_failed error=\"{}\"", e.what());
    return 1;
  }

  shardscaler::k8s::RealClock clock;
  // The operator names its writes PrometheusOperator (some of them in v0.93; all of them here).
  shardscaler::k8s::RestClient client(*config, {.field_manager = "PrometheusOperator"});
  TargetControllerOptions options{
      .namespaces = flags.namespaces,
      .workers = flags.workers,
      .resync_period = flags.resync_period,
      .status_poll_period = flags.status_poll_period,
      .controller_id = flags.controller_id,
      .lag = {.statefulsets = flags.statefulset_lag, .targets = flags.target_lag},
      .sync_latency = flags.sync_latency,
      .sync_latency_jitter = flags.sync_latency_jitter,
      .seed = flags.seed,
      .shard_retention = flags.shard_retention};
  std::vector<std::unique_ptr<TargetController>> controllers;
  for (const auto* kind :
       {&shardscaler::emulator::prometheusKind(), &shardscaler::emulator::prometheusAgentKind()}) {
    controllers.push_back(
        std::make_unique<TargetController>(*kind, client, clock, *action_log, options));
  }
  spdlog::info(
      "event=starting server={} namespaces={} workers={} statefulset_lag_ms={} target_lag_ms={} "
      "sync_latency_ms={} sync_latency_jitter_ms={} seed={}",
      config->server,
      flags.namespaces.empty() ? std::string("all") : std::to_string(flags.namespaces.size()),
      flags.workers, flags.statefulset_lag.count(), flags.target_lag.count(),
      flags.sync_latency.count(), flags.sync_latency_jitter.count(), flags.seed);
  for (auto& controller : controllers) controller->startInformers();

  // Wait for the caches (bounded), as the operator does before handling events.
  const auto deadline = std::chrono::steady_clock::now() + flags.sync_timeout;
  bool synced = false;
  while (!synced) {
    synced = true;
    for (auto& controller : controllers) synced = synced && controller->hasSynced();
    if (synced) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      spdlog::error(
          "event=cache_sync_timeout timeout_ms={} hint=\"are the Prometheus and "
          "PrometheusAgent CRDs installed?\"",
          flags.sync_timeout.count());
      for (auto& controller : controllers) controller->stop();
      return 1;
    }
    if (shutdown.waitFor(100ms)) break;
  }
  if (!shutdown.requested()) {
    for (auto& controller : controllers) controller->run();
    action_log->record({.verb = "ready", .outcome = "ok"});
    spdlog::info("event=ready");
    while (!shutdown.waitFor(1h)) {
    }
  }
  spdlog::info("event=stopping signal={}", shutdown.signal());
  std::vector<std::thread> stoppers;
  stoppers.reserve(controllers.size());
  for (auto& controller : controllers) {
    stoppers.emplace_back([&controller] { controller->stop(); });
  }
  for (auto& stopper : stoppers) stopper.join();
  spdlog::info("event=stopped");
  return 0;
}
