// What the scale benchmark watches while shardscaler works: when every ShardSet has its status,
// and what one transition of one ShardSet costs. For the transition it also stands in for the
// operator's status report of that one target (the workload runs no operator). Benchmarks only.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::bench {

// Watches every ShardSet (all namespaces) and notes when `expected` of them have status.shards
// == shards for their current generation.
class ConvergenceWatch {
 public:
  ConvergenceWatch(k8s::KubeClient& client, int shards, int expected);
  ~ConvergenceWatch();
  ConvergenceWatch(const ConvergenceWatch&) = delete;
  ConvergenceWatch& operator=(const ConvergenceWatch&) = delete;

  // When the count was first reached; nullopt after `limit`.
  std::optional<std::chrono::steady_clock::time_point> waitFor(std::chrono::seconds limit);
  std::string describe() const;

 private:
  void run();
  void note(const k8s::Json& shard_set, bool deleted);

  k8s::KubeClient& client_;
  const int shards_;
  const int expected_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, bool> converged_;
  int count_ = 0;
  std::optional<std::chrono::steady_clock::time_point> reached_;
  std::thread thread_;
};

// Waits until shardscaler's work queue is empty (shardscaler_workqueue_depth 0 on two looks a
// second apart): the reconciles its own writes caused may still run after every status is set.
// How long it took; nullopt after `limit`.
std::optional<std::chrono::duration<double>> waitQueueDrained(e2e::ShardscalerProcess& shardscaler,
                                                              std::chrono::seconds limit);

struct TransitionCost {
  double wall_s = 0;
  double cpu_ms = 0;    // shardscaler's
  double requests = 0;  // shardscaler's API requests (shardscaler_kube_requests_total)
};

// Scales one ShardSet through its scale subresource and waits (polling) until the target has
// the new spec.shards, is not paused, the shards above it are detached and those below attached,
// and the ShardSet's status says so. Meanwhile it acknowledges the target's pauses as the
// operator's status report does (status.paused, conditions' observedGeneration).
class TransitionProbe {
 public:
  TransitionProbe(k8s::KubeClient& client, std::string ns, std::string target, int shards,
                  e2e::ShardscalerProcess& shardscaler);
  ~TransitionProbe();
  TransitionProbe(const TransitionProbe&) = delete;
  TransitionProbe& operator=(const TransitionProbe&) = delete;

  TransitionCost scaleTo(int shards);

 private:
  void acknowledgePauses();
  bool done(int shards, std::string* seen);
  double requestCount() const;

  k8s::KubeClient& client_;
  const std::string ns_;
  const std::string target_;
  const int max_shards_;
  e2e::ShardscalerProcess& shardscaler_;
  std::atomic<bool> stop_{false};
  std::thread acknowledger_;
};

}  // namespace shardscaler::bench
