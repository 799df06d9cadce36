// Transition latency against the real local control plane: from the write of spec.shards
// (through the ShardSet's scale subresource, as kubectl scale and the HPA do) until the target
// is patched and the StatefulSets are annotated (scale-down, Retain) or re-attached (scale-up).
// Runs the real shardscaler binary and the operator emulator (as a plain user, so the guard judges
// its writes) twice: with the shard guard installed and enforced (transitions do not wait), and
// without it at the fallback's default settle time (10 s: each transition waits it out). Prints
// p50/p90/p99/max per mode, and the samples of the fallback.
//
// usage: controller_transition_latency [GUARDED=100] [FALLBACK=6] (transition counts; 0 skips a
// mode)
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "request_counts.h"
#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The state the bench waits for, read from watch events as they arrive.
struct Observed {
  std::mutex mutex;
  Json target;
  std::map<std::string, Json> stateful_sets;
  int want = -1;                             // the transition being timed
  std::optional<Clock::time_point> done_at;  // first event after which it was complete
};

bool doneLocked(const Observed& o, int shards);

void watchInto(const k8s::Resource& resource, const std::string& ns, Observed& observed,
               const std::atomic<bool>& stop) {
  while (!stop) {
    auto list = adminClient().list(resource, ns);
    if (!list) continue;
    {
      std::lock_guard lock(observed.mutex);
      for (const Json& item : (*list)["items"]) {
        if (resource == kPrometheuses) {
          observed.target = item;
        } else {
          observed.stateful_sets[item["metadata"]["name"]] = item;
        }
      }
    }
    k8s::WatchOptions opts;
    opts.resource_version = (*list)["metadata"]["resourceVersion"];
    opts.timeout_seconds = 60;
    (void)adminClient().watch(
        resource, ns, opts,
        [&](k8s::WatchEvent&& e) {
          if (e.type == k8s::WatchEventType::Bookmark) return true;
          std::lock_guard lock(observed.mutex);
          if (resource == kPrometheuses) {
            observed.target = e.object;
          } else if (e.type == k8s::WatchEventType::Deleted) {
            observed.stateful_sets.erase(e.object["metadata"]["name"]);
          } else {
            observed.stateful_sets[e.object["metadata"]["name"]] = e.object;
          }
          if (!observed.done_at && doneLocked(observed, observed.want)) {
            observed.done_at = Clock::now();
          }
          return true;
        },
        &stop);
  }
}

bool doneLocked(const Observed& o, int shards) {
  if (!o.target.is_object()) return false;  // not listed yet
  const Json& spec = o.target.value("spec", Json::object());
  if (spec.value("shards", -1) != shards || spec.value("paused", false)) return false;
  for (const auto& [name, sts] : o.stateful_sets) {
    const Json& labels = sts["metadata"].value("labels", Json::object());
    const Json& annotations = sts["metadata"].value("annotations", Json::object());
    if (!labels.contains("operator.prometheus.io/shard")) continue;  // the guard's probe
    const int index = std::stoi(labels.value("operator.prometheus.io/shard", "0"));
    const bool annotated = annotations.contains("operator.prometheus.io/deletion-timestamp");
    const bool attached = labels.contains("operator.prometheus.io/name");
    if (index >= shards && (!annotated || attached)) return false;
    if (index < shards && (annotated || !attached)) return false;
  }
  return true;
}

bool done(Observed& o, int shards) {
  std::lock_guard lock(o.mutex);
  return doneLocked(o, shards);
}

double percentile(std::vector<double> v, double p) {
  std::ranges::sort(v);
  const auto i = std::min(v.size() - 1, static_cast<size_t>(std::lround(p * (v.size() - 1))));
  return v[i];
}

void row(const std::string& what, const std::vector<double>& v) {
  if (v.empty()) return;
  std::printf("%-40s n=%-3zu p50=%8.1f ms  p90=%8.1f ms  p99=%8.1f ms  max=%8.1f ms\n",
              what.c_str(), v.size(), percentile(v, 0.5), percentile(v, 0.9), percentile(v, 0.99),
              *std::ranges::max_element(v));
}

// One mode: its own namespace, emulator and shardscaler; `transitions` alternating 4 -> 2 and
// 2 -> 4 with Retain. Returns false when a transition did not finish.
bool run(bool guarded, int transitions) {
  const std::string mode = guarded ? "guarded" : "fallback";
  const std::string ns = createNamespace("bench-" + mode);
  const auto logs = cluster().workDir() / "bench" / mode;
  std::filesystem::create_directories(logs);
  constexpr int kOperatorUser = 2;
  grantOperatorRole(ns, "user-" + std::to_string(kOperatorUser));
  const GuardWebhook webhook{.configuration = "bench-guard-" + ns,
                             .port = testenv::pickFreePort(),
                             .label_key = "bench.shardscaler.io/guarded-by",
                             .label_value = ns};
  std::vector<std::string> args;
  if (guarded) {
    guardNamespace(webhook, ns);
    installGuardWebhook(webhook);
    args = guardServingArgs(webhook, ns);
  } else {
    args = {"--settle-time=10s"};  // the default, which the e2e harness would lower to 1 s
  }
  testenv::OperatorEmulator emulator({.kubeconfig = cluster().writeKubeconfig(
                                          "bench-operator", cluster().userToken(kOperatorUser)),
                                      .namespaces = {ns},
                                      .work_dir = logs / "emulator"});
  ShardscalerProcess shardscaler({.kubeconfig = cluster().kubeconfigPath(),
                                  .namespaces = {ns},
                                  .extra_args = args,
                                  .log_file = logs / "shardscaler.log"});
  struct Cleanup {
    const GuardWebhook& webhook;
    bool guarded;
    ~Cleanup() {
      if (guarded) removeGuardWebhook(webhook.configuration);
    }
  } cleanup{webhook, guarded};
  if (guarded) {
    std::string why;
    if (!test_kit::eventually(
            60s, kPoll,
            [&](std::string* seen) {
              const auto status = guard::readGuardStatus(adminClient(), webhook.configuration, ns);
              *seen = status.reason;
              return status.enforced;
            },
            &why)) {
      std::cerr << "the guard was never enforced: " << why << "\n";
      return false;
    }
    if (auto called = waitUntilGuardCalled(shardscaler, ns); !called) {
      std::cerr << called.message() << "\n";
      return false;
    }
  }
  apply(
      "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
      "namespace: " +
      ns + "}\nspec: {shards: 4, replicas: 1}\n");
  apply(shardSetYaml(ns, "main", {.shards = 4, .when_scaled = "Retain", .retention_period = "1h"}));

  Observed observed;
  std::atomic<bool> stop{false};
  std::thread t1([&] { watchInto(kPrometheuses, ns, observed, stop); });
  std::thread t2([&] { watchInto(k8s::resources::statefulSets(), ns, observed, stop); });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& a;
    std::thread& b;
    ~Join() {
      stop = true;
      a.join();
      b.join();
    }
  } join{stop, t1, t2};
  if (!test_kit::eventually(60s, kPoll, [&](std::string*) { return done(observed, 4); })) {
    std::cerr << mode << ": never settled at 4 shards\n" << shardscaler.logTail();
    return false;
  }

  const bench::RequestCounts requests_before = bench::shardscalerRequests(shardscaler);
  const bench::RequestCounts webhooks_before = bench::apiServerWebhookCalls(adminClient());
  std::vector<double> down_ms, up_ms;
  for (int i = 0; i < transitions; ++i) {
    const int to = i % 2 == 0 ? 2 : 4;
    std::this_thread::sleep_for(200ms);  // let the emulator's follow-up writes settle
    {
      std::lock_guard lock(observed.mutex);
      observed.want = to;
      observed.done_at.reset();
    }
    const auto start = Clock::now();
    auto r = adminClient().patch(kShardSets, ns, "main", k8s::PatchType::Merge,
                                 Json{{"spec", {{"replicas", to}}}}, "scale");
    if (!r) {
      std::cerr << mode << ": scale write failed: " << r.error().describe() << "\n";
      return false;
    }
    if (!test_kit::eventually(60s, kPoll, [&](std::string*) {
          std::lock_guard lock(observed.mutex);
          return observed.done_at.has_value();
        })) {
      std::cerr << mode << ": transition " << i << " to " << to << " did not finish\n";
      return false;
    }
    double ms;
    {
      std::lock_guard lock(observed.mutex);
      ms = std::chrono::duration<double, std::milli>(*observed.done_at - start).count();
    }
    (to == 2 ? down_ms : up_ms).push_back(ms);
  }

  // Counted over every transition with what follows each (the status, the reads after the
  // writes, the operator's follow-up writes): per transition, these do not change with load.
  auto per_transition = [&](bench::RequestCounts counts) {
    for (auto& [key, value] : counts) value /= transitions;
    return counts;
  };
  bench::printCounts(
      mode + ": shardscaler's requests per transition",
      per_transition(bench::since(bench::shardscalerRequests(shardscaler), requests_before)));
  bench::printCounts(
      mode + ": admission webhook calls per transition (all writers)",
      per_transition(bench::since(bench::apiServerWebhookCalls(adminClient()), webhooks_before)));
  std::vector<double> all = down_ms;
  all.insert(all.end(), up_ms.begin(), up_ms.end());
  row(mode + ": scale-down 4->2 (Retain)", down_ms);
  row(mode + ": scale-up 2->4 (re-attach)", up_ms);
  row(mode + ": all transitions", all);
  if (!guarded) {
    std::printf("%s samples (ms, in order, down/up alternating):", mode.c_str());
    for (size_t i = 0; i < down_ms.size() || i < up_ms.size(); ++i) {
      if (i < down_ms.size()) std::printf(" %.0f", down_ms[i]);
      if (i < up_ms.size()) std::printf(" %.0f", up_ms[i]);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
  return true;
}

}  // namespace
}  // namespace shardscaler::e2e

namespace {

// A transition count from the command line: a whole number from 0 to 100000, or nullopt.
std::optional<int> parseCount(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0 || value > 100000) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<int> guarded = argc > 1 ? parseCount(argv[1]) : 100;
  const std::optional<int> fallback = argc > 2 ? parseCount(argv[2]) : 6;
  if (argc > 3 || !guarded || !fallback) {
    std::cerr << "usage: controller_transition_latency [GUARDED] [FALLBACK]\n"
                 "  GUARDED, FALLBACK: how many transitions to time with the guard (default 100)\n"
                 "  and without it (default 6), each a whole number from 0 to 100000\n";
    return 2;
  }
  try {
    bool ok = *guarded == 0 || shardscaler::e2e::run(true, *guarded);
    ok = (*fallback == 0 || shardscaler::e2e::run(false, *fallback)) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "transition_latency: " << e.what() << "\n";
    return 1;
  }
}
