// Issue 10's scale benchmark: the real shardscaler binary against the real local control plane
// holding 1,000 Prometheus targets with 10 shards each (10,000 operator-shaped StatefulSets,
// replicas 0) and 1,000 ShardSets, in one namespace or spread over 100. Per run it reports:
//   idle      RSS once synced on the empty namespace(s);
//   first     ShardSets created on a fresh workload while shardscaler runs: it claims every
//             target and labels every shard (what it leaves behind), then writes status;
//   transition one scale-down and one scale-up of a ShardSet in the loaded namespace;
//   restart   a new shardscaler process on that steady workload (claims and labels in place,
//             ShardSet statuses cleared so that convergence can be seen): its full relist,
//             then a status for every ShardSet.
// Times are wall-clock, CPU-seconds and RSS are shardscaler's own (from /proc). Each phase also
// prints its requests by verb and resource, shardscaler's and the API server's (all clients):
// counts that a loaded machine does not change. Nothing is asserted: the numbers go to
// bench/README.md.
//
// With --restart-workers=4,16 each run ends with one more restart per worker count (statuses
// cleared again each time): the restart phase costs a minute where a whole run costs many.
//
// usage: controller_scale_bench [--namespaces=1] [--targets=1000] [--shards=10] [--runs=1]
//                           [--parallel=16] [--workers=N] [--restart-workers=N,...]
//                           [--binary=PATH]
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_flags.h"
#include "process_usage.h"
#include "request_counts.h"
#include "scale_progress.h"
#include "scale_workload.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::bench {
namespace {

using k8s::Json;
using Seconds = std::chrono::duration<double>;
using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Options {
  WorkloadShape shape;
  int runs = 1;
  int workers = 0;  // 0: shardscaler's default
  std::vector<int> restart_workers;
  std::string binary;  // another shardscaler build to measure (the baseline); "" = this tree's
};

// One restart on the steady workload with every ShardSet status cleared.
struct RestartResult {
  int workers = 0;
  double ready_s = 0;     // from start to /readyz (informers synced)
  double converge_s = 0;  // from start to every status set
  double cpu_s = 0;
  double drain_s = 0;     // from all status set to an empty work queue
  double reconciles = 0;  // from start to the empty queue
  double requests = 0;    // API requests, likewise
  ProcessUsage steady;    // 10 s after the queue drained; peak covers the relist
};

struct RunResult {
  double generate_s = 0;
  double sts_kib = 0;  // mean size of one StatefulSet as the server returns it
  ProcessUsage idle;
  // First start on a fresh workload.
  double first_create_s = 0;      // creating the ShardSets
  double first_after_last_s = 0;  // from the last ShardSet created to every status set
  double first_cpu_s = 0;         // shardscaler's CPU from the first ShardSet created to then
  double generate_cpu_s = 0;      // shardscaler's CPU while the workload was created
  double first_drain_s = 0;       // from all status set to an empty work queue
  double first_drain_cpu_s = 0;   // shardscaler's CPU from its start to the empty queue
  double first_reconciles = 0;    // from shardscaler's start to the empty queue
  double first_requests = 0;      // API requests, likewise
  ProcessUsage first_steady;      // 10 s after the queue drained
  // One transition each way in the loaded namespace.
  TransitionCost down, up;
  RestartResult restart;                     // at --workers
  std::vector<RestartResult> restart_sweep;  // at each of --restart-workers
};

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (auto v = intFlag(a, "namespaces")) {
      o.shape.namespaces = *v;
    } else if (auto v = intFlag(a, "targets")) {
      o.shape.targets = *v;
    } else if (auto v = intFlag(a, "shards")) {
      o.shape.shards = *v;
    } else if (auto v = intFlag(a, "runs")) {
      o.runs = *v;
    } else if (auto v = intFlag(a, "parallel")) {
      o.shape.parallel = *v;
    } else if (auto v = intFlag(a, "workers")) {
      o.workers = *v;
    } else if (a.starts_with("--restart-workers=")) {
      o.restart_workers = intList(a.substr(18));
    } else if (a.starts_with("--binary=")) {
      o.binary = std::string(a.substr(9));
    } else {
      throw std::runtime_error("unknown argument " + std::string(a));
    }
  }
  return o;
}

template <typename T>
T must(k8s::Result<T> r, const std::string& what) {
  if (!r) throw std::runtime_error(what + ": " + r.error().describe());
  if constexpr (!std::is_void_v<T>) return std::move(*r);
}

bool waitReady(e2e::ShardscalerProcess& p, Seconds limit) {
  const auto deadline = SteadyClock::now() + limit;
  while (SteadyClock::now() < deadline) {
    if (p.httpGet(p.probePort(), "/readyz").first == 200) return true;
    if (!p.running()) return false;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

e2e::ShardscalerOptions shardscalerOptions(const testenv::ControlPlane& cp, const Options& o,
                                           int workers, const std::string& log_name) {
  e2e::ShardscalerOptions s;
  s.kubeconfig = cp.kubeconfigPath();
  if (o.shape.namespaces == 1) s.namespaces = {"scale-0"};  // else: all namespaces
  s.extra_args = {"--log-level=warn"};
  if (workers > 0) s.extra_args.push_back("--workers=" + std::to_string(workers));
  s.log_file = cp.workDir() / log_name;
  s.binary = o.binary;
  return s;
}

// A new shardscaler process on the steady workload, every ShardSet status cleared first so
// that its convergence can be seen. Stops the process before it returns.
RestartResult restartOnce(const testenv::ControlPlane& cp, k8s::RestClient& client,
                          const Options& o, int workers) {
  RestartResult result{.workers = workers};
  must(clearShardSetStatus(client, o.shape), "clear status");
  const RequestCounts api_before = apiServerRequests(client);
  ConvergenceWatch watch(client, o.shape.shards, o.shape.targets);
  const auto started = SteadyClock::now();
  e2e::ShardscalerProcess shardscaler(shardscalerOptions(
      cp, o, workers, "shardscaler-restart-" + std::to_string(workers) + ".log"));
  if (!waitReady(shardscaler, 300s)) throw std::runtime_error("restart not ready");
  result.ready_s = Seconds(SteadyClock::now() - started).count();
  auto converged = watch.waitFor(900s);
  if (!converged) throw std::runtime_error(watch.describe() + "\n" + shardscaler.logTail());
  result.converge_s = Seconds(*converged - started).count();
  result.cpu_s = readProcessUsage(shardscaler.pid()).cpu_seconds;
  auto drained = waitQueueDrained(shardscaler, 1800s);
  if (!drained) throw std::runtime_error("the work queue did not drain after the restart");
  result.drain_s = drained->count();
  result.reconciles = e2e::metricSum(shardscaler, "shardscaler_reconciles_total").value_or(0);
  result.requests = e2e::metricSum(shardscaler, "shardscaler_kube_requests_total").value_or(0);
  const std::string phase = "restart (workers " + std::to_string(workers) + ")";
  printCounts(phase + ", shardscaler's requests", shardscalerRequests(shardscaler));
  printCounts(phase + ", the API server's requests (all clients)",
              since(apiServerRequests(client), api_before));
  std::this_thread::sleep_for(10s);
  result.steady = readProcessUsage(shardscaler.pid());
  shardscaler.terminate(15s);
  std::cerr << "restart (workers " << workers << "): all status " << result.converge_s
            << " s after start\n";
  return result;
}

RunResult runOnce(const Options& o) {
  RunResult result;
  testenv::ControlPlane cp;
  installCrds(cp);
  auto config = must(k8s::loadKubeconfigFiles({cp.kubeconfigPath()}), "kubeconfig");
  k8s::RestClient client(std::move(config),
                         {.max_idle_connections = static_cast<size_t>(o.shape.parallel)});
  const int n = o.shape.targets;

  auto shardscaler = std::make_unique<e2e::ShardscalerProcess>(
      shardscalerOptions(cp, o, o.workers, "shardscaler-first.log"));
  if (!waitReady(*shardscaler, 60s))
    throw std::runtime_error("not ready:\n" + shardscaler->logTail());
  std::this_thread::sleep_for(5s);
  result.idle = readProcessUsage(shardscaler->pid());
  std::cerr << "idle: " << result.idle.rss_mib << " MiB; creating the workload\n";

  auto before_generate = readProcessUsage(shardscaler->pid());
  auto workload = must(createTargetsAndShards(client, o.shape), "workload");
  result.generate_s = workload.took.count();
  result.sts_kib = static_cast<double>(workload.stateful_set_bytes) / workload.stateful_sets / 1024;
  result.generate_cpu_s =
      readProcessUsage(shardscaler->pid()).cpu_seconds - before_generate.cpu_seconds;
  std::cerr << "workload: " << workload.stateful_sets << " StatefulSets in " << result.generate_s
            << " s; creating ShardSets\n";

  const RequestCounts own_before = shardscalerRequests(*shardscaler);
  const RequestCounts api_before = apiServerRequests(client);
  {
    ConvergenceWatch watch(client, o.shape.shards, n);
    const auto before = readProcessUsage(shardscaler->pid());
    result.first_create_s = must(createShardSets(client, o.shape), "ShardSets").count();
    const auto last_created = SteadyClock::now();
    auto converged = watch.waitFor(900s);
    if (!converged) throw std::runtime_error(watch.describe() + "\n" + shardscaler->logTail());
    result.first_after_last_s = Seconds(*converged - last_created).count();
    result.first_cpu_s = readProcessUsage(shardscaler->pid()).cpu_seconds - before.cpu_seconds;
  }
  {
    auto drained = waitQueueDrained(*shardscaler, 1800s);
    if (!drained) throw std::runtime_error("the work queue did not drain in 1800 s");
    result.first_drain_s = drained->count();
    result.first_drain_cpu_s = readProcessUsage(shardscaler->pid()).cpu_seconds;
    result.first_reconciles =
        e2e::metricSum(*shardscaler, "shardscaler_reconciles_total").value_or(0);
    result.first_requests =
        e2e::metricSum(*shardscaler, "shardscaler_kube_requests_total").value_or(0);
    printCounts("first start, shardscaler's requests",
                since(shardscalerRequests(*shardscaler), own_before));
    printCounts("first start, the API server's requests (all clients, the ShardSets' creation too)",
                since(apiServerRequests(client), api_before));
  }
  std::this_thread::sleep_for(10s);
  result.first_steady = readProcessUsage(shardscaler->pid());
  std::cerr << "first start converged " << result.first_after_last_s
            << " s after the last ShardSet\n";

  TransitionProbe probe(client, "scale-0", targetName(0), o.shape.shards, *shardscaler);
  for (const int to : {o.shape.shards - 1, o.shape.shards}) {
    const RequestCounts before = shardscalerRequests(*shardscaler);
    (to < o.shape.shards ? result.down : result.up) = probe.scaleTo(to);
    printCounts("transition to " + std::to_string(to) + ", shardscaler's requests",
                since(shardscalerRequests(*shardscaler), before));
  }

  shardscaler->terminate(15s);
  shardscaler.reset();
  result.restart = restartOnce(cp, client, o, o.workers);
  for (int workers : o.restart_workers) {
    result.restart_sweep.push_back(restartOnce(cp, client, o, workers));
  }
  return result;
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v.empty() ? 0 : v[v.size() / 2];
}

void report(const Options& o, const std::vector<RunResult>& runs) {
  auto col = [&](auto get) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const auto& r : runs) v.push_back(get(r));
    return v;
  };
  auto line = [&](const char* name, auto get, const char* unit) {
    auto v = col(get);
    std::printf("%-58s median %9.2f %-4s runs:", name, median(v), unit);
    for (double x : v) std::printf(" %.2f", x);
    std::printf("\n");
  };
  std::printf(
      "\nworkload: %d namespace(s), %d targets x %d shards = %d StatefulSets, %d ShardSets; "
      "shardscaler --workers=%s; %zu run(s)\n",
      o.shape.namespaces, o.shape.targets, o.shape.shards, o.shape.targets * o.shape.shards,
      o.shape.targets, o.workers > 0 ? std::to_string(o.workers).c_str() : "(its default)",
      runs.size());
  line(
      "StatefulSet size as returned by the server", [](auto& r) { return r.sts_kib; }, "KiB");
  line(
      "workload creation (targets + StatefulSets)", [](auto& r) { return r.generate_s; }, "s");
  line(
      "idle RSS (synced, empty namespace)", [](auto& r) { return r.idle.rss_mib; }, "MiB");
  line(
      "shardscaler CPU while the workload was created", [](auto& r) { return r.generate_cpu_s; },
      "s");
  line(
      "first start: creating the ShardSets", [](auto& r) { return r.first_create_s; }, "s");
  line(
      "first start: last ShardSet created -> all status set",
      [](auto& r) { return r.first_after_last_s; }, "s");
  line(
      "first start: CPU from first ShardSet to all status", [](auto& r) { return r.first_cpu_s; },
      "s");
  line(
      "first start: all status set -> work queue empty", [](auto& r) { return r.first_drain_s; },
      "s");
  line(
      "first start: CPU from shardscaler's start to empty queue",
      [](auto& r) { return r.first_drain_cpu_s; }, "s");
  line(
      "first start: peak RSS", [](auto& r) { return r.first_steady.peak_rss_mib; }, "MiB");
  line(
      "first start: steady RSS", [](auto& r) { return r.first_steady.rss_mib; }, "MiB");
  line(
      "scale-down 10->9: wall", [](auto& r) { return r.down.wall_s; }, "s");
  line(
      "scale-down 10->9: shardscaler CPU", [](auto& r) { return r.down.cpu_ms; }, "ms");
  line(
      "scale-down 10->9: API requests", [](auto& r) { return r.down.requests; }, "");
  line(
      "scale-up 9->10: wall", [](auto& r) { return r.up.wall_s; }, "s");
  line(
      "scale-up 9->10: shardscaler CPU", [](auto& r) { return r.up.cpu_ms; }, "ms");
  line(
      "scale-up 9->10: API requests", [](auto& r) { return r.up.requests; }, "");
  line(
      "first start: reconciles (start -> empty queue)", [](auto& r) { return r.first_reconciles; },
      "");
  line(
      "first start: API requests (start -> empty queue)", [](auto& r) { return r.first_requests; },
      "");
  auto restart = [&](const std::string& at, auto get_restart) {
    auto of = [&](auto field) { return [=](auto& r) { return field(get_restart(r)); }; };
    const std::string p = "restart" + at + ": ";
    line((p + "start -> ready (full relist)").c_str(),
         of([](const RestartResult& x) { return x.ready_s; }), "s");
    line((p + "start -> all status set").c_str(),
         of([](const RestartResult& x) { return x.converge_s; }), "s");
    line((p + "CPU from start to all status").c_str(),
         of([](const RestartResult& x) { return x.cpu_s; }), "s");
    line((p + "all status set -> work queue empty").c_str(),
         of([](const RestartResult& x) { return x.drain_s; }), "s");
    line((p + "reconciles (start -> empty queue)").c_str(),
         of([](const RestartResult& x) { return x.reconciles; }), "");
    line((p + "API requests (start -> empty queue)").c_str(),
         of([](const RestartResult& x) { return x.requests; }), "");
    line((p + "peak RSS (relist + reconciles)").c_str(),
         of([](const RestartResult& x) { return x.steady.peak_rss_mib; }), "MiB");
    line((p + "steady RSS").c_str(), of([](const RestartResult& x) { return x.steady.rss_mib; }),
         "MiB");
  };
  restart("", [](const RunResult& r) -> const RestartResult& { return r.restart; });
  for (std::size_t i = 0; i < o.restart_workers.size(); ++i) {
    restart(" --workers=" + std::to_string(o.restart_workers[i]),
            [i](const RunResult& r) -> const RestartResult& { return r.restart_sweep[i]; });
  }
}

}  // namespace
}  // namespace shardscaler::bench

int main(int argc, char** argv) {
  using namespace shardscaler::bench;
  try {
    const Options o = parseOptions(argc, argv);
    std::vector<RunResult> runs;
    for (int i = 0; i < o.runs; ++i) {
      std::cerr << "run " << i + 1 << " of " << o.runs << "\n";
      runs.push_back(runOnce(o));
      report(o, runs);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "scale bench failed: " << e.what() << "\n";
    return 1;
  }
}
