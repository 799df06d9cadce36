// The ShardSet controller: wires the informers of ShardSets, their targets and the targets'
// StatefulSets to a work loop that reconciles each ShardSet level-triggered (read, plan, apply,
// publish status and Events). It never acts on an event's contents, and never deletes what the
// planner keeps. The roles are controller-runtime's, each in a class of its own under
// src/: the event mapper, the caches, the reader and the reconciler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "shardscaler/ingestion/drain_check.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/controller.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::ingestion {
class IngestionSource;
}  // namespace shardscaler::ingestion
namespace shardscaler::k8s {
class TaskPool;
}  // namespace shardscaler::k8s

namespace shardscaler::controller {

// The drain readings of a ShardSet's due shards, by StatefulSet name.
using DrainCheck = std::function<std::map<std::string, planner::DrainReading, std::less<>>(
    const planner::DrainPolicy& policy, const ingestion::DrainRequest& request)>;

// Plan/apply rounds in one reconcile, unless ShardSetControllerOptions::max_rounds says otherwise.
inline constexpr int kDefaultMaxRounds = 4;

struct ShardSetControllerOptions {
  std::vector<std::string> namespaces;  // empty = all namespaces
  // The work is latency-bound (sequential API round trips): docs/design/reads.md.
  int workers = 8;
  // Plan/apply rounds in one reconcile: after a successful round the objects are read again
  // and planned again, so one reconcile usually finishes a whole transition.
  int max_rounds = kDefaultMaxRounds;
  std::chrono::minutes resync_period{10};
  // Without the admission guard: the fallback's settle time and pause-acknowledgement timeout.
  // Their defaults, and the drain's, are planner::TransitionSafety's.
  std::chrono::nanoseconds settle_time = planner::TransitionSafety{}.settle_time;
  std::chrono::nanoseconds pause_ack_timeout = planner::TransitionSafety{}.pause_ack_timeout;
  // Under a drain: the longest wait for the surviving shards' reload before a deletion.
  std::chrono::nanoseconds drain_reload_floor = planner::TransitionSafety{}.reload_floor;
  // After a write is refused for good, how long no new transition of that ShardSet starts.
  std::chrono::nanoseconds apply_failure_hold = std::chrono::minutes(1);
  // Whether the admission guard is enforced for ShardSets in namespace `ns`, read live when a
  // transition may need it; when not, *why says why. Unset: not enforced (the fallback applies).
  std::function<bool(const std::string& ns, std::string* why)> guard_enforced;
  // Reads whether due shards drained (docs/design/drain.md). Unset: an ingestion::DrainChecker
  // querying the drain's Prometheus, when drain_url_policy allows its URL, or reading the shards'
  // own pods through drain_pods when the drain names none.
  DrainCheck drain_check;
  ingestion::PrometheusUrlPolicy drain_url_policy = ingestion::PrometheusUrlPolicy::defaults();
  std::shared_ptr<ingestion::ShardMetricsSource> drain_pods;
};

class ShardSetCaches;
class ShardSetEventMapper;
class ShardSetReader;
class GuardStatusCache;
class ShardSetReconciler;
class Expectations;
class TransitionHolds;
class DrainGate;

// Thread-safety: reconcile() may run on several workers at once for different keys (the work loop
// never hands one key to two workers). start/stop from one thread.
class ShardSetController {
 public:
  // metrics and ingestion may be null. All references must outlive the controller.
  ShardSetController(k8s::KubeClient& client, const k8s::Clock& clock, k8s::EventRecorder& events,
                     telemetry::Metrics* metrics, ShardSetControllerOptions options,
                     ingestion::IngestionSource* ingestion = nullptr);
  ~ShardSetController();
  ShardSetController(const ShardSetController&) = delete;
  ShardSetController& operator=(const ShardSetController&) = delete;

  // Starts the informers (every replica runs them, so a new leader starts warm).
  void startInformers();
  // True once every informer has listed once. When false, *why says which are not.
  bool hasSynced(std::string* why = nullptr) const;
  bool waitForSync(std::chrono::nanoseconds timeout) const;
  // How long a worker waits for the caches at a time before it looks for a stop again.
  static constexpr std::chrono::seconds kCacheSyncStep{1};

  // Starts the workers (the leader only). Call after startInformers(). Each waits until every
  // informer has synced before it takes a key.
  void startWorkers();
  // Stops taking work, lets reconciles in flight finish (up to drain_timeout), stops informers.
  // Returns false when a reconcile was still running at the deadline.
  bool stop(std::chrono::nanoseconds drain_timeout);
  // The Lease is lost: a reconcile draining no longer waits to finish a transition (another
  // replica may lead now). Callable from any thread, before or during stop().
  void leadershipLost();

  // Enqueue a ShardSet by key ("namespace/name"), e.g. when its ingestion rates changed.
  void enqueue(const std::string& key);

  // One level-triggered pass over the ShardSet `key`. Public for tests and `shardscaler plan`.
  k8s::ReconcileOutcome reconcile(const std::string& key);

  // Plans without writing: what a reconcile of this ShardSet would do if spec.shards were
  // `shards` (nullopt = as written). Reads from the API server, not the caches.
  k8s::Result<planner::Plan> dryRun(const std::string& ns, const std::string& name,
                                    std::optional<int32_t> shards);

 private:
  class QueueMetrics;
  k8s::ControllerOptions workLoopOptions();

  telemetry::Metrics* metrics_;
  const int workers_;
  std::unique_ptr<QueueMetrics> queue_metrics_;
  // The parts, in the order they depend on each other (each outlives those after it).
  std::unique_ptr<Expectations> expectations_;
  std::unique_ptr<ShardSetCaches> caches_;
  std::unique_ptr<ShardSetEventMapper> event_mapper_;
  // The threads the requests a reconcile sends beside its own run on (the reader's lists, the
  // applier's adjacent writes). Outlives the work loop's workers.
  std::unique_ptr<k8s::TaskPool> side_requests_;
  std::unique_ptr<ShardSetReader> reader_;
  std::unique_ptr<GuardStatusCache> guard_status_;
  std::unique_ptr<TransitionHolds> holds_;
  std::unique_ptr<DrainGate> drain_;
  std::unique_ptr<ShardSetReconciler> reconciler_;
  // The workers: each waits for the caches (hasSynced) before it takes a key.
  std::unique_ptr<k8s::Controller> work_loop_;
};

}  // namespace shardscaler::controller
