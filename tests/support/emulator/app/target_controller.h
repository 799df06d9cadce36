// The emulated operator's controller for one kind (Prometheus or PrometheusAgent): caches of
// the targets and of the StatefulSets its label selector sees (optionally lagging the API
// server), a reconcile queue and a status queue, and the sync that creates, updates and deletes
// the shards' StatefulSets as the real operator does. It writes only StatefulSets, the config
// Secret, the governing Service and the targets' status, and never acts on a target that was
// paused when its sync read it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "action_log.h"
#include "operator_caches.h"
#include "shard_naming.h"
#include "shard_retention.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/controller.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "status_report.h"
#include "target_assets.h"
#include "target_kind.h"
#include "write_recorder.h"

namespace shardscaler::emulator {

struct TargetControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  int workers = 1;                      // reconcile workers (the operator runs one)
  // Every period, every target is queued for reconcile (0: never). The real operator's informer
  // resync is filtered out by its handlers; this stands in for the reconciles that its other
  // triggers (monitors, ConfigMaps, Secrets, namespaces) cause in a live cluster.
  std::chrono::milliseconds resync_period{std::chrono::minutes(5)};
  // operator.StatusPoller: targets not fully available get a status refresh this often.
  std::chrono::milliseconds status_poll_period{std::chrono::minutes(1)};
  std::string controller_id;  // operator.prometheus.io/controller-id to own ("" = unannotated)
  // How far the caches trail the API server (an informer under load).
  CacheLag lag;
  // A busy operator: each sync holds sync_latency plus up to sync_latency_jitter (uniform, from
  // an RNG seeded with `seed`) after it read the target, before it acts on it.
  std::chrono::milliseconds sync_latency{0};
  std::chrono::milliseconds sync_latency_jitter{0};
  std::uint64_t seed = 1;
  // The PrometheusShardRetentionPolicy feature gate (on by default from v0.92, Prometheus only):
  // an excess shard of a target whose spec.shardRetentionPolicy.whenScaled is Retain gets
  // operator.prometheus.io/deletion-deadline instead of a DELETE, and goes once that passed
  // (the operator looks once a minute). --shard-retention=false stands for older operators.
  bool shard_retention = true;
  std::chrono::milliseconds retention_poll{std::chrono::minutes(1)};
};

class TargetController {
 public:
  TargetController(const TargetKind& kind, k8s::KubeClient& client, const k8s::Clock& clock,
                   ActionLog& log, TargetControllerOptions options);
  ~TargetController();
  TargetController(const TargetController&) = delete;
  TargetController& operator=(const TargetController&) = delete;

  void startInformers();
  // The caches have listed, and their (lagged) views show the lists.
  bool hasSynced() const;
  // Registers the event handlers (every cached target is queued) and starts the workers.
  void run();
  // Stops taking work, lets in-flight syncs finish, stops the informers. Idempotent.
  void stop();

 private:
  using Key = std::string;

  // Event handlers (pkg/operator/resource_reconciler.go).
  void onTargetAdd(const k8s::ObjectPtr& object);
  void onTargetUpdate(const k8s::ObjectPtr& old_object, const k8s::ObjectPtr& new_object);
  void onStatefulSetAdd(const k8s::ObjectPtr& object);
  void onStatefulSetUpdate(const k8s::ObjectPtr& old_object, const k8s::ObjectPtr& new_object);
  void onStatefulSetDelete(const k8s::ObjectPtr& object);
  std::optional<Key> ownerKey(const Json& statefulset) const;

  // The two loops' reconcilers (processNextReconcileItem, processNextStatusItem).
  k8s::ReconcileOutcome reconcileTarget(const Key& key);
  k8s::ReconcileOutcome reconcileStatus(const Key& key);
  void periodicLoop(std::chrono::milliseconds period, bool status_only);

  k8s::Result<void> sync(const Key& key);
  // The --sync-latency hold; false when the controller stops meanwhile.
  bool holdSync(const Key& key);
  k8s::Result<void> syncStatefulSets(const Json& target);
  k8s::Result<void> createStatefulSetOrPatchLabels(const Json& target, int shard,
                                                   const Json& desired);
  k8s::Result<void> forceUpdateStatefulSet(const Json& target, int shard, const Json& desired);
  k8s::Result<void> deleteExcessStatefulSets(const Json& target);
  // processShardRetention: true when the excess shard is kept (annotated now, or its deadline
  // has not passed, or cannot be read); false when it is to be deleted. `kept` is set when the
  // target must be looked at again for it.
  bool retainExcessShard(const Json& target, const Json& statefulset, bool& kept);
  k8s::Result<void> updateStatus(const Key& key);

  const TargetKind& kind_;
  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  TargetControllerOptions options_;
  ActionLog& log_;
  WriteRecorder recorder_;
  TargetAssets assets_;

  OperatorCaches caches_;
  k8s::Controller reconciles_;  // options.workers workers: sync()
  k8s::Controller statuses_;    // one worker: updateStatus()

  // Targets with a retained shard whose deadline is still ahead: requeued every retention_poll.
  std::mutex retained_mutex_;
  std::set<Key> retaining_;
  mutable std::mutex outcomes_mutex_;
  std::map<Key, ReconcileOutcome> outcomes_;  // ReconciliationTracker

  std::mutex rng_mutex_;
  std::mt19937_64 rng_;  // sync latency jitter

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool running_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace shardscaler::emulator
