// shardscaler-demo: the main job of hack/demo.sh. Starts a real local control plane, the
// operator emulator, real Prometheus shard processes and shardscaler, then walks through a
// Retain scale-down, a scale-up, a passing deadline and an HPA-driven change, printing a
// timeline. Exits 0 when every step happened as it should, 1 otherwise; it cleans up either way.
//
// usage: shardscaler-demo [--keep]   (--keep: stay up at the end until Ctrl-C, for kubectl)
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/testenv/operator_emulator.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kNs = "monitoring";

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

 private:
  std::mutex mutex_;
  SteadyClock::time_point start_ = SteadyClock::now();
};

// Prints every new Event about the ShardSet as it appears: what was retained until when, what
// was re-attached, what was deleted.
class EventFeed {
 public:
  explicit EventFeed(Timeline& timeline) : timeline_(timeline), thread_([this] { run(); }) {}
  ~EventFeed() {
    stop_ = true;
    thread_.join();
  }
  void poll() {
    k8s::ListOptions opts;
    opts.field_selector = "involvedObject.kind=ShardSet,involvedObject.name=main";
    auto list = adminClient().list(k8s::resources::events(), kNs, opts);
    if (!list) return;
    for (const Json& e : (*list)["items"]) {
      const std::string key =
          e["metadata"].value("name", "") + "/" + std::to_string(e.value("count", 1));
      if (!seen_.insert(key).second) continue;
      timeline_.line("event " + e.value("type", "") + " " + e.value("reason", "") + ": " +
                     e.value("message", ""));
    }
  }

 private:
  void run() {
    while (!stop_) {
      poll();
      std::this_thread::sleep_for(300ms);
    }
  }
  Timeline& timeline_;
  std::set<std::string> seen_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
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

std::string ingestionLine() {
  Json ing = status().value("ingestion", Json::object());
  if (ing.empty()) return "no ingestion data yet";
  char buf[128];
  std::snprintf(buf, sizeof buf, "samples/s total %.0f", ing.value("totalSamplesPerSecond", 0.0));
  std::string line = buf;
  for (const Json& s : ing.value("perShard", Json::array())) {
    std::snprintf(buf, sizeof buf, ", shard %d: %.0f", s.value("index", -1),
                  s.value("samplesPerSecond", 0.0));
    line += buf;
  }
  line += "; recommended shards " + status().value("recommendedShards", Json("-")).dump();
  return line;
}

int run(bool keep) {
  Timeline t;
  t.step(
      "Starting a local Kubernetes 1.20 control plane (etcd, kube-apiserver, controller-manager)");
  testenv::ControlPlane& cp = cluster();
  t.line("control plane at " + cp.server());
  t.line("point kubectl at it:  kubectl --kubeconfig " + cp.kubeconfigPath().string() +
         " get shardsets -n " + kNs);

  apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + kNs + "}\n");
  const auto work = cp.workDir() / "demo";
  std::filesystem::create_directories(work);

  t.step("Starting 4 real Prometheus shard processes and a Prometheus that scrapes them");
  testenv::ShardedPrometheus prometheus(
      {.name = "main", .ns = kNs, .shards = 4, .work_dir = work / "prometheus"});
  t.line("scraper at " + prometheus.scraperUrl() + " (pods " + prometheus.podRegex() + ")");

  t.step("Starting the operator emulator and shardscaler");
  testenv::OperatorEmulator emulator(
      {.kubeconfig = cp.kubeconfigPath(), .namespaces = {kNs}, .work_dir = work / "emulator"});
  ShardscalerProcess shardscaler({.kubeconfig = cp.kubeconfigPath(),
                                  .namespaces = {kNs},
                                  .log_file = work / "shardscaler.log"});
  t.line("shardscaler log: " + shardscaler.logFile().string());

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
        "\n    interval: 3s\n    targetSamplesPerShard: 2000\n"
        "    query: 'sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total"
        "{namespace=\"$NAMESPACE\",pod=~\"$POD_REGEX\"}[20s]))'\n");
  EventFeed events(t);
  bool ok = true;
  ok &= check(t, eventually(60s, [](std::string*) { return settled(4, 0); }),
              "4 shards active (StatefulSets created by the operator emulator)");
  std::cout << kubectlOut(std::string("get statefulsets -n ") + kNs);

  t.step("Sample-ingestion rates per shard, from real Prometheus");
  ok &= check(
      t,
      eventually(90s,
                 [](std::string*) {
                   return status().value("ingestion", Json::object()).value("error", "x").empty() &&
                          status().contains("recommendedShards");
                 }),
      "rates reported");
  t.line(ingestionLine());
  std::cout << kubectlOut(std::string("get shardsets -n ") + kNs);

  t.step("kubectl scale shardset/main --replicas=2   (scale-down, Retain)");
  kubectl(std::string("scale shardset/main -n ") + kNs + " --replicas=2");
  ok &= check(t, eventually(60s, [](std::string*) { return settled(2, 2); }),
              "target at 2 shards, shards 2 and 3 retained (detached, still running)");
  for (const Json& r : status().value("retainedShards", Json::array())) {
    t.line("retained: shard " + std::to_string(r.value("index", -1)) + " (" +
           r.value("statefulSet", "") + ") until " + r.value("deletionTimestamp", ""));
  }
  t.line("pods the ShardSet's selector picks (one per active shard): " +
         kubectlOut(std::string("get pods -n ") + kNs + " -o name -l '" +
                    status().value("selector", "") + "'"));

  t.step("kubectl scale shardset/main --replicas=3   (scale-up re-uses a retained shard)");
  kubectl(std::string("scale shardset/main -n ") + kNs + " --replicas=3");
  ok &= check(t, eventually(60s, [](std::string*) { return settled(3, 1); }),
              "shard 2 re-attached with its data, shard 3 still retained");

  t.step("Waiting for shard 3's deadline to pass");
  ok &= check(t, eventually(90s, [](std::string*) { return settled(3, 0); }),
              "shard 3 deleted after its deadline (foreground, through the garbage collector)");

  t.step("An HPA on the ShardSet with maxReplicas 2 drives a scale-down");
  apply(std::string("apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: "
                    "{name: main, namespace: ") +
        kNs +
        "}\nspec:\n  scaleTargetRef: {apiVersion: shardscaler.io/v1alpha1, kind: ShardSet, name: "
        "main}\n  minReplicas: 1\n  maxReplicas: 2\n  metrics:\n  - type: Resource\n"
        "    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n");
  ok &= check(t, eventually(60s, [](std::string*) { return settled(2, 1); }),
              "the HPA set 2 shards through the scale subresource; shard 2 retained");
  t.line(ingestionLine());
  std::cout << kubectlOut(std::string("get shardsets -n ") + kNs);
  events.poll();

  if (keep) {
    t.step("Still running (--keep): try kubectl --kubeconfig " + cp.kubeconfigPath().string() +
           " describe shardset main -n monitoring; Ctrl-C to stop");
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
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace shardscaler::e2e

int main(int argc, char** argv) {
  const bool keep = argc > 1 && std::strcmp(argv[1], "--keep") == 0;
  try {
    return shardscaler::e2e::run(keep);
  } catch (const std::exception& e) {
    std::cerr << "shardscaler-demo: " << e.what() << "\n";
    return 1;
  }
}
