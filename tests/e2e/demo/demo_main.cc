// shardscaler-demo: the main job of hack/demo.sh. Starts a real local control plane, the
// operator emulator, real Prometheus shard processes and shardscaler, then walks through a
// Retain scale-down, a scale-up, a passing deadline and an HPA that scales on the shards'
// sample ingestion through shardscaler's external metrics API, printing a timeline. Exits 0 when
// every step happened as it should, 1 otherwise; it cleans up either way. At the end it draws
// the run (shards, samples/s, the HPA's decisions) as a PNG with gnuplot and prints its path.
//
// The whole process lives in a network namespace of its own (the aggregator refuses loopback
// endpoints, so shardscaler serves the metrics API at 10.200.0.1 there); it needs root.
//
// usage: shardscaler-demo [--keep] [--plot-dir DIR]
//   --keep: stay up at the end until Ctrl-C, for kubectl
//   --plot-dir: where shardscaler-demo.png (and its .dat and .gp) go; default the current one
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "run_chart.h"
#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/external_metrics_hpa.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/operator_emulator.h"
#include "shardscaler/testenv/sharded_prometheus.h"
#include "shardscaler/testenv/tcp_relay.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kNs = "monitoring";
// The ShardSet's target and the HPA's AverageValue: the HPA then wants status.recommendedShards.
constexpr int kTargetSamplesPerShard = 2000;
constexpr int kRateWindowSeconds = 20;
// There are 4 Prometheus shard processes, so 4 is as far as the HPA may go.
constexpr int kHpaMaxShards = 4;
constexpr int kStabilizationSeconds = 20;

class Timeline {
 public:
  void line(const std::string& text) {
    std::lock_guard lock(mutex_);
    const double s = std::chrono::duration<double>(SteadyClock::now() - start_).count();
    std::printf("[%6.1fs] %s\n", s, text.c_str());
    std::fflush(stdout);
  }
  void step(const std::string& text) {
    std::lock_guard lock(mutex_);
    std::printf("\n== %s\n", text.c_str());
    std::fflush(stdout);
  }
  double seconds() const {
    return std::chrono::duration<double>(SteadyClock::now() - start_).count();
  }

 private:
  std::mutex mutex_;
  const SteadyClock::time_point start_ = SteadyClock::now();
};

// Calls `poll` every `period` on a thread of its own until destroyed.
class PollingThread {
 public:
  PollingThread(std::chrono::milliseconds period, std::function<void()> poll)
      : period_(period), poll_(std::move(poll)), thread_([this] { run(); }) {}
  ~PollingThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  void run() {
    while (!stop_) {
      poll_();
      std::this_thread::sleep_for(period_);
    }
  }
  const std::chrono::milliseconds period_;
  const std::function<void()> poll_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Prints every new Event about the ShardSet and the HPA as it appears: what was retained until
// when, what was re-attached, what was deleted, what the HPA rescaled to and why.
class EventFeed {
 public:
  EventFeed(Timeline& timeline, RunChart& chart)
      : timeline_(timeline), chart_(chart), thread_(300ms, [this] { poll(); }) {}
  void poll() {
    std::lock_guard lock(mutex_);
    k8s::ListOptions opts;
    opts.field_selector = "involvedObject.name=main";
    auto list = adminClient().list(k8s::resources::events(), kNs, opts);
    if (!list) return;
    for (const Json& e : (*list)["items"]) {
      const std::string kind = e["involvedObject"].value("kind", "");
      if (kind != "ShardSet" && kind != "HorizontalPodAutoscaler") continue;
      const std::string key =
          e["metadata"].value("name", "") + "/" + std::to_string(e.value("count", 1));
      if (!seen_.insert(key).second) continue;
      timeline_.line(std::string(kind == "ShardSet" ? "event " : "event HPA ") +
                     e.value("type", "") + " " + e.value("reason", "") + ": " +
                     e.value("message", ""));
      markRescale(e);
    }
  }

 private:
  // The HPA's decisions are its SuccessfulRescale Events: "New size: 4; reason: ...".
  void markRescale(const Json& e) {
    static const std::regex kNewSize("New size: ([0-9]+)");
    std::smatch m;
    const std::string message = e.value("message", "");
    if (e.value("reason", "") != "SuccessfulRescale" || !std::regex_search(message, m, kNewSize)) {
      return;
    }
    chart_.mark(timeline_.seconds(), RunChart::MarkKind::HpaDecision, "HPA → " + m[1].str());
  }

  Timeline& timeline_;
  RunChart& chart_;
  std::mutex mutex_;
  std::set<std::string> seen_;
  PollingThread thread_;  // last: it calls poll() on the members above
};

// Records the ShardSet's shard counts and total samples/s into the chart once a second.
class ShardSetRecorder {
 public:
  ShardSetRecorder(Timeline& timeline, RunChart& chart)
      : timeline_(timeline), chart_(chart), thread_(1s, [this] { poll(); }) {}

 private:
  // On its own thread: a failed read (or an object not yet complete) is a gap in the picture,
  // never an error.
  void poll() {
    try {
      const Json ss = getOrNull(kShardSets, kNs, "main");
      if (!ss.is_object()) return;
      const Json st = ss.value("status", Json::object());
      const Json ingestion = st.value("ingestion", Json::object());
      std::optional<double> samples;
      if (!ingestion.empty() && ingestion.value("error", "").empty()) {
        samples = ingestion.value("totalSamplesPerSecond", 0.0);
      }
      chart_.sample(timeline_.seconds(), ss.value("spec", Json::object()).value("shards", 0),
                    st.value("shards", 0),
                    static_cast<int>(st.value("retainedShards", Json::array()).size()), samples);
    } catch (const std::exception&) {
    }
  }

  Timeline& timeline_;
  RunChart& chart_;
  PollingThread thread_;  // last: it calls poll() on the members above
};

std::string kubectlOut(const std::string& args) {
  auto r = kubectl(args);
  return r.exit_code == 0 ? r.out : "kubectl " + args + " failed: " + r.err;
}

bool check(Timeline& t, bool ok, const std::string& what) {
  t.line(std::string(ok ? "ok: " : "FAILED: ") + what);
  return ok;
}

// Status fields, for waiting on them.
Json status() {
  Json ss = getOrNull(kShardSets, kNs, "main");
  return ss.is_object() ? ss.value("status", Json::object()) : Json::object();
}

bool settled(int active, int retained) {
  Json target = getOrNull(kPrometheuses, kNs, "main");
  Json st = status();
  return target.is_object() && target["spec"].value("shards", -1) == active &&
         !target["spec"].value("paused", false) && st.value("shards", -1) == active &&
         st.value("retainedShards", Json::array()).size() == static_cast<size_t>(retained);
}

void printRetained(Timeline& t) {
  for (const Json& r : status().value("retainedShards", Json::array())) {
    t.line("retained: shard " + std::to_string(r.value("index", -1)) + " (" +
           r.value("statefulSet", "") + ") until " + r.value("deletionTimestamp", ""));
  }
}

// The ShardSet's status in one line: active and retained shards, the per-shard rates and the
// recommendation.
std::string shardSetLine() {
  Json st = status();
  std::string line = "ShardSet: " + std::to_string(st.value("shards", 0)) + " active, retained [";
  std::string sep;
  for (const Json& r : st.value("retainedShards", Json::array())) {
    line += sep + std::to_string(r.value("index", -1));
    sep = ",";
  }
  line += "]; ";
  Json ing = st.value("ingestion", Json::object());
  if (ing.empty()) return line + "no ingestion data yet";
  if (!ing.value("error", "").empty()) return line + "ingestion error: " + ing.value("error", "");
  // Retained shards' processes keep running here (and scraping themselves), so the query still
  // finds them; the HPA's metric counts only the active ones.
  const int active = st.value("shards", 0);
  char buf[128];
  line += "samples/s";
  sep = " ";
  for (const Json& s : ing.value("perShard", Json::array())) {
    const int index = s.value("index", -1);
    std::snprintf(buf, sizeof buf, "%sshard %d: %.0f%s", sep.c_str(), index,
                  s.value("samplesPerSecond", 0.0), index < active ? "" : " (not active)");
    line += buf;
    sep = ", ";
  }
  std::snprintf(buf, sizeof buf, "; total %.0f", ing.value("totalSamplesPerSecond", 0.0));
  return line + buf + ", recommended shards " + st.value("recommendedShards", Json("-")).dump();
}

// Prints the HPA's decision and the ShardSet's status beside it whenever the decision (wanted and
// current count, conditions) changes, and every 10 s while only the rates move.
class HpaFeed {
 public:
  explicit HpaFeed(Timeline& timeline) : timeline_(timeline), thread_(500ms, [this] { poll(); }) {}

 private:
  // On its own thread: a failed read is printed (once while it repeats), never thrown.
  void poll() {
    try {
      printDecision();
      last_error_.clear();
    } catch (const std::exception& e) {
      if (last_error_ != e.what()) timeline_.line(std::string("reading the HPA: ") + e.what());
      last_error_ = e.what();
    }
  }

  void printDecision() {
    const HpaView hpa = readHpa(kNs, "main");
    if (!hpa.exists) return;
    std::string decision = std::to_string(hpa.desired_replicas) + "/" +
                           std::to_string(hpa.current_replicas) +
                           (hpa.metric_value.empty() ? "/-" : "/+");
    for (const char* type : {"AbleToScale", "ScalingActive", "ScalingLimited"}) {
      const Json c = hpa.condition(type);
      decision += "/" + (c.is_object() ? c.value("reason", "") : std::string());
    }
    const auto now = SteadyClock::now();
    if (decision == last_decision_ && now - last_print_ < 10s) return;
    last_decision_ = decision;
    last_print_ = now;
    timeline_.line("HPA " + hpa.describe());
    timeline_.line(shardSetLine());
  }

  Timeline& timeline_;
  std::string last_decision_;
  std::string last_error_;
  SteadyClock::time_point last_print_;
  PollingThread thread_;  // last: it calls poll() on the members above
};

// Runs the host's kubectl line from the host's network namespace (`host_netns`, an fd of this
// process opened before it left), so the line the demo prints is known to work.
void checkFromHost(const std::string& host_kubectl, int host_netns) {
  const std::string ns_path =
      "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(host_netns);
  auto result = testenv::runCommand(
      {"/bin/sh", "-c",
       "exec nsenter --net=" + ns_path + " " + host_kubectl + " get namespace " + kNs + " -o name"},
      "", std::chrono::seconds(60));
  if (result.exit_code != 0 || result.out.find(kNs) == std::string::npos) {
    throw std::runtime_error("kubectl from the host's network namespace failed (" +
                             std::to_string(result.exit_code) + "): " + result.err + result.out);
  }
}

int run(bool keep, const std::filesystem::path& plot_dir, int host_listener, int host_netns) {
  Timeline t;
  RunChart chart;
  t.step(
      "Starting a local Kubernetes 1.20 control plane (etcd, kube-apiserver with the aggregation "
      "layer, controller-manager)");
  testenv::ControlPlane& cp = cluster();
  // The host's kubectl reaches the API server through this relay, which listens on the host's
  // loopback and carries each connection into the demo's network namespace; the serving
  // certificate names 127.0.0.1, so TLS verifies as before.
  testenv::TcpRelay host_relay(cp.port(), host_listener);
  host_relay.up();
  const std::string host_kubectl =
      "kubectl --kubeconfig " + cp.writeAdminKubeconfigVia("host", host_relay.httpsUrl()).string();
  t.line("control plane at " + cp.server() + " in the demo's own network namespace, relayed to " +
         host_relay.httpsUrl() + " on the host");
  t.line("point kubectl at it from another shell while the demo runs:  " + host_kubectl +
         " get shardsets -n " + kNs);

  apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + kNs + "}\n");
  checkFromHost(host_kubectl, host_netns);
  const auto work = cp.workDir() / "demo";
  std::filesystem::create_directories(work);

  t.step("Starting 4 real Prometheus shard processes and a Prometheus that scrapes them");
  testenv::ShardedPrometheus prometheus(
      {.name = "main", .ns = kNs, .shards = 4, .work_dir = work / "prometheus"});
  t.line("scraper at " + prometheus.scraperUrl() + " (pods " + prometheus.podRegex() + ")");

  t.step("Starting the operator emulator and shardscaler (serving the external metrics API)");
  const MetricsApiRegistration metrics_api(kNs);
  testenv::OperatorEmulator emulator(
      {.kubeconfig = cp.kubeconfigPath(), .namespaces = {kNs}, .work_dir = work / "emulator"});
  ShardscalerProcess shardscaler({.kubeconfig = cp.kubeconfigPath(),
                                  .namespaces = {kNs},
                                  .extra_args = metrics_api.shardscalerArgs(),
                                  .log_file = work / "shardscaler.log"});
  t.line("shardscaler log: " + shardscaler.logFile().string());
  t.line(std::string("APIService ") + kMetricsApiServiceName + " -> Service " + kNs + "/" +
         kMetricsApiService + " -> shardscaler at " + kMetricsApiAddress);

  t.step("A Prometheus with 4 shards and a ShardSet (Retain, retentionPeriod 25s)");
  apply(std::string("apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: "
                    "main, namespace: ") +
        kNs + "}\nspec: {shards: 4, replicas: 1, retention: 15d}\n");
  apply(std::string("apiVersion: shardscaler.io/v1alpha1\nkind: ShardSet\nmetadata: {name: main, "
                    "namespace: ") +
        kNs +
        "}\nspec:\n  targetRef: {kind: Prometheus, name: main}\n  shards: 4\n  maxShards: 6\n"
        "  shardRetentionPolicy: {whenScaled: Retain, retain: {retentionPeriod: 25s}}\n"
        "  ingestion:\n    prometheusURL: " +
        prometheus.scraperUrl() +
        "\n    interval: 3s\n    targetSamplesPerShard: " + std::to_string(kTargetSamplesPerShard) +
        "\n    query: '" + samplesRateQuery(kRateWindowSeconds) + "'\n");
  EventFeed events(t, chart);
  ShardSetRecorder recorder(t, chart);
  bool ok = true;
  ok &= check(t, test_kit::eventually(60s, kPoll, [](std::string*) { return settled(4, 0); }),
              "4 shards active (StatefulSets created by the operator emulator)");
  std::cout << kubectlOut(std::string("get statefulsets -n ") + kNs);

  t.step("Sample-ingestion rates per shard, from real Prometheus");
  ok &=
      check(t,
            test_kit::eventually(
                90s, kPoll,
                [](std::string*) {
                  return status().value("ingestion", Json::object()).value("error", "x").empty() &&
                         status().contains("recommendedShards");
                }),
            "rates reported");
  t.line(shardSetLine());
  std::cout << kubectlOut(std::string("get shardsets -n ") + kNs);

  t.step("kubectl scale shardset/main --replicas=2   (scale-down, Retain)");
  chart.mark(t.seconds(), RunChart::MarkKind::KubectlScale, "kubectl scale → 2");
  kubectl(std::string("scale shardset/main -n ") + kNs + " --replicas=2");
  ok &= check(t, test_kit::eventually(60s, kPoll, [](std::string*) { return settled(2, 2); }),
              "target at 2 shards, shards 2 and 3 retained (detached, still running)");
  printRetained(t);
  t.line("pods the ShardSet's selector picks (one per active shard): " +
         kubectlOut(std::string("get pods -n ") + kNs + " -o name -l '" +
                    status().value("selector", "") + "'"));

  t.step("kubectl scale shardset/main --replicas=3   (scale-up re-uses a retained shard)");
  chart.mark(t.seconds(), RunChart::MarkKind::KubectlScale, "kubectl scale → 3");
  kubectl(std::string("scale shardset/main -n ") + kNs + " --replicas=3");
  ok &= check(t, test_kit::eventually(60s, kPoll, [](std::string*) { return settled(3, 1); }),
              "shard 2 re-attached with its data, shard 3 still retained");

  // What the operator's config reloader does on a cluster: the shards below the new count reload
  // the configuration the operator wrote for it and take over shard 3's targets. The drain lets
  // shard 3 go only after that (or 3 minutes after it left the count). Prometheus records a
  // reload's time in whole seconds: a second later, it is after the lowering.
  std::this_thread::sleep_for(1100ms);
  for (int shard = 0; shard < 3; ++shard) prometheus.reloadShard(shard);
  t.line("the operator's config reloader: shards 0 to 2 reloaded the configuration for 3 shards");

  t.step("Waiting for shard 3's deadline to pass");
  ok &= check(t, test_kit::eventually(90s, kPoll, [](std::string*) { return settled(3, 0); }),
              "shard 3 deleted after its deadline (foreground, through the garbage collector)");

  // The HPA steps down one shard at a time over tens of seconds; with 25 s the first shard it
  // retains could pass its deadline before the last step, on a slow machine.
  t.step("kubectl patch shardset/main: retentionPeriod 10m for the HPA's scale-down");
  ok &= check(t,
              kubectl(std::string("patch shardset/main -n ") + kNs +
                      " --type merge -p '{\"spec\":{\"shardRetentionPolicy\":{\"retain\":"
                      "{\"retentionPeriod\":\"10m\"}}}}'")
                      .exit_code == 0,
              "the ShardSet now retains removed shards for 10 minutes");

  t.step(std::string("An HPA on ") + kSamplesMetric + " (an external metric, through the " +
         "aggregator): 1 to " + std::to_string(kHpaMaxShards) + " shards, " +
         std::to_string(kTargetSamplesPerShard) + " samples/s per shard, scale-down window " +
         std::to_string(kStabilizationSeconds) + "s");
  std::string seen;
  ok &= check(t, test_kit::eventually(120s, kPoll, MetricsApiRegistration::available, &seen),
              "the APIService is Available (shardscaler injected its caBundle)" +
                  (seen.empty() ? std::string() : "; its status: " + seen));
  apply(samplesHpaYaml({.ns = kNs,
                        .max_replicas = kHpaMaxShards,
                        .target_samples_per_shard = kTargetSamplesPerShard,
                        .scale_down_stabilization_seconds = kStabilizationSeconds}));
  HpaFeed decisions(t);
  ok &= check(
      t,
      test_kit::eventually(60s, kPoll,
                           [](std::string*) { return !readHpa(kNs, "main").metric_value.empty(); }),
      "the HPA reads the metric through shardscaler's API");

  t.step("Ingestion grows: every shard appends twice as many samples (4 self-scrape jobs, not 2)");
  chart.mark(t.seconds(), RunChart::MarkKind::Load, "ingestion ×2");
  prometheus.setLoad(4, 1s);
  ok &= check(
      t, test_kit::eventually(120s, kPoll, [](std::string*) { return settled(kHpaMaxShards, 0); }),
      "the HPA scaled the ShardSet up to " + std::to_string(kHpaMaxShards) +
          " (its maxReplicas) through the scale subresource");
  std::cout << kubectlOut(std::string("get shardsets,hpa -n ") + kNs);

  t.step("Ingestion falls: every shard scrapes itself once every 15 s");
  chart.mark(t.seconds(), RunChart::MarkKind::Load, "ingestion falls");
  prometheus.setLoad(1, 15s);
  const double fell_at = t.seconds();
  ok &= check(
      t,
      test_kit::eventually(150s, kPoll, [](std::string*) { return settled(1, kHpaMaxShards - 1); }),
      "the HPA scaled the ShardSet down to 1 after its stabilization window; Retain " +
          std::string("keeps shards 1 to ") + std::to_string(kHpaMaxShards - 1));
  char took[128];
  std::snprintf(took, sizeof took,
                "%.0f s after ingestion fell (the rates' %d s window, then the HPA's %d s)",
                t.seconds() - fell_at, kRateWindowSeconds, kStabilizationSeconds);
  t.line(took);
  printRetained(t);
  std::cout << kubectlOut(std::string("get statefulsets,shardsets,hpa -n ") + kNs);
  events.poll();

  t.step("The picture of the run (gnuplot)");
  // A few more seconds of the end state, so that the picture shows it.
  const std::size_t recorded = chart.samples();
  test_kit::eventually(15s, kPoll, [&](std::string*) { return chart.samples() >= recorded + 5; });
  const auto png = chart.plot(plot_dir, "shardscaler-demo");
  ok &= check(t, png.has_value(), png ? "drew " + png->string() : "no picture: " + png.error());

  if (keep) {
    t.step("Still running (--keep): try " + host_kubectl + " describe shardset main -n " + kNs +
           "; Ctrl-C to stop");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    int sig = 0;
    sigwait(&set, &sig);
  }
  t.step(ok ? "Demo finished: every step happened as expected" : "Demo FAILED (see above)");
  if (!ok) {
    std::cout << "---- shardscaler log (tail) ----\n" << shardscaler.logTail() << "\n";
  }
  if (png) std::cout << "The run as a picture: " << png->string() << "\n";
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace shardscaler::e2e

int main(int argc, char** argv) {
  bool keep = false;
  std::filesystem::path plot_dir = ".";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--keep") == 0) {
      keep = true;
    } else if (std::strcmp(argv[i], "--plot-dir") == 0 && i + 1 < argc) {
      plot_dir = argv[++i];
    } else {
      std::cerr << "usage: shardscaler-demo [--keep] [--plot-dir DIR]\n";
      return 2;
    }
  }
  try {
    // First, while the process has no other thread and no child: all it starts inherits the
    // namespace. The host's end of the kubectl relay is opened before, so it stays on the host.
    const int host_listener = shardscaler::testenv::TcpRelay::listenOnFreePort();
    const int host_netns = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (host_netns < 0) throw std::runtime_error("cannot open /proc/self/ns/net");
    shardscaler::e2e::enterMetricsApiNetworkNamespace();
    return shardscaler::e2e::run(keep, plot_dir, host_listener, host_netns);
  } catch (const std::exception& e) {
    std::cerr << "shardscaler-demo: " << e.what() << "\n";
    return 1;
  }
}
