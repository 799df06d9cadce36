// The ShardSet controller: watches ShardSets, their targets and the targets' StatefulSets, and
// reconciles each ShardSet level-triggered (read, plan, apply, publish status and Events).
// It never acts on an event's contents, and never deletes what the retention planner keeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/controller/own_writes.h"
#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/controller.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/telemetry/logging.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::ingestion {
class IngestionSource;
}  // namespace shardscaler::ingestion

namespace shardscaler::controller {

struct ControllerOptions {
  std::vector<std::string> namespaces;  // empty = all namespaces
  // The work is latency-bound (sequential API round trips): docs/design.md §12.
  int workers = 8;
  // Plan/apply rounds in one reconcile: after a successful round the objects are read again
  // and planned again, so one reconcile usually finishes a whole transition.
  int max_rounds = 4;
  std::chrono::minutes resync_period{10};
  // Without the admission guard: the fallback's settle time and pause-acknowledgement timeout.
  std::chrono::nanoseconds settle_time = std::chrono::seconds(10);
  std::chrono::nanoseconds pause_ack_timeout = std::chrono::seconds(30);
  // After a write is refused for good, how long no new transition of that ShardSet starts.
  std::chrono::nanoseconds apply_failure_hold = std::chrono::minutes(1);
  // Whether the admission guard is enforced for ShardSets in namespace `ns`, read live when a
  // transition may need it; when not, *why says why. Unset: not enforced (the fallback applies).
  std::function<bool(const std::string& ns, std::string* why)> guard_enforced;
};

// What one reconcile decided about its key (the Controller's loop acts on it).
using ReconcileOutcome = k8s::ReconcileOutcome;

// Thread-safety: reconcile() may run on several workers at once for different keys (the
// Controller never hands one key to two workers). start/stop from one thread.
class ShardSetController {
 public:
  // metrics and ingestion may be null. All references must outlive the controller.
  ShardSetController(k8s::KubeClient& client, const k8s::Clock& clock, k8s::EventRecorder& events,
                     telemetry::Metrics* metrics, ControllerOptions options,
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
  // After a reconcile that only claimed its target or guarded shards, when the next one looks:
  // the watch echoes of those writes take milliseconds; a cache still behind then is read live.
  static constexpr std::chrono::milliseconds kConfirmFromCachesAfter{200};

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
  ReconcileOutcome reconcile(const std::string& key);

  // Plans without writing: what a reconcile of this ShardSet would do if spec.shards were
  // `shards` (nullopt = as written). Reads from the API server, not the caches.
  k8s::Result<planner::Plan> dryRun(const std::string& ns, const std::string& name,
                                    std::optional<int32_t> shards);

 private:
  struct Observed;
  class QueueMetrics;
  struct NamedInformer {
    std::string description;  // for /readyz: "shardsets.shardscaler.io/v1alpha1 in monitoring"
    std::unique_ptr<k8s::Informer> informer;
  };

  // opts: what the informer selects and keeps; namespace, resync and metrics are added here.
  void addInformer(const k8s::Resource& resource, const std::string& ns, k8s::InformerOptions opts,
                   k8s::EventHandlers handlers, std::vector<NamedInformer>& into);
  k8s::EventHandlers shardSetHandlers();
  k8s::EventHandlers targetHandlers(planner::TargetKind kind);
  k8s::EventHandlers statefulSetHandlers();
  // Each queues every ShardSet the object maps to but `echo_of`: the ShardSet whose own write
  // the event only echoes (empty: none).
  void enqueueForTarget(const std::string& ns, planner::TargetKind kind,
                        const std::string& target_name, const std::string& echo_of = {});
  void enqueueForStatefulSet(const k8s::Json& sts, const std::string& echo_of = {});
  void enqueueUnlessEcho(const std::string& key, const std::string& echo_of);

  // What planAndApply ended with: the last plan, the write that failed for good (if any), or
  // the outcome to return at once (a read failed, or too many rounds).
  struct Rounds {
    planner::Plan plan;
    ApplyOutcome failure;
    std::optional<ReconcileOutcome> early;
    std::optional<size_t> zones;  // of the target, when found
    // Of the last live read: the target's resourceVersion and the newest of its shards'.
    std::uint64_t live_target_version = 0;
    std::uint64_t live_shards_version = 0;
    // The last plan claimed the target or guarded shards, and nothing else, and every write
    // held: the rounds end there, without a read, and the versions above are those the writes
    // were answered with. The next reconcile plans from the caches once they hold them (or
    // reads live), and writes the status; this one writes none.
    bool confirm_from_caches = false;
  };

  // The target and its shards, as of now; the guard when a transition may run. `first_round`:
  // the first read of a reconcile (or of a dry run), which may read the guard early.
  k8s::Result<Observed> observe(const api::ShardSet& shard_set, bool first_round) const;
  // Whether the StatefulSet caches hold a shard attached to the ShardSet's target that does not
  // carry its guard label (or cannot tell: no cache, or one not synced yet), so that observe()
  // must read the target's shards by the operator's name label too.
  bool cacheShowsUnlabelledShards(const api::ShardSet& shard_set) const;
  // The caches a plan of `shard_set` would read: the informer of its target's kind and the
  // StatefulSet one, both of its namespace and both synced. nullopt: an unknown target kind or
  // no target name, no caches (a dry run) or none for its namespace, or one not synced yet.
  struct TargetCaches {
    planner::TargetKind kind;
    const k8s::Informer* targets;
    const k8s::Informer* shards;
  };
  std::optional<TargetCaches> syncedCaches(const api::ShardSet& shard_set) const;
  // Whether the caches (synced) show the ShardSet's target claimed by no ShardSet, and no
  // detached shard under this ShardSet's guard label: what a first claim finds.
  bool cacheShowsAFirstClaim(const api::ShardSet& shard_set) const;
  // The target and its shards as the caches hold them, when a plan from them can be trusted to
  // say that nothing but the status is to be written (docs/design.md §12): the caches have
  // synced and are at least as new as this ShardSet's last live read (which came after every
  // target and StatefulSet write of its reconcile), that reconcile ended with a plan that had
  // nothing left to write, every shard they hold for the target carries this ShardSet's guard
  // label, and the target shows no transition. nullopt: read live.
  std::optional<Observed> observeCached(const api::ShardSet& shard_set) const;
  // Records what the last read of a live reconcile of `key` saw, or that it stopped early, failed
  // or released a target (`read_live_next`), so that the next one reads live too.
  void noteLiveRead(const std::string& key, const Rounds& rounds, bool read_live_next);
  planner::PlanInput planInput(const api::ShardSet& shard_set, Observed observed,
                               planner::PlanPurpose purpose) const;
  // Reads, plans and applies until a plan has nothing to do (at most max_rounds + 1 plans).
  // `log` carries the reconcile's key and reconcile_id into every line it and the applier write.
  // A ShardSet at rest is planned from the caches instead (observeCached), when they allow it.
  Rounds planAndApply(const api::ShardSet& shard_set, const k8s::InvolvedObject& subject,
                      const telemetry::LogContext& log, planner::PlanPurpose purpose);
  // The rounds from live reads; unless they stop early or fail, the last one plans nothing to
  // write, from a read that came after every write of the rounds before it.
  Rounds liveRounds(const api::ShardSet& shard_set, const k8s::InvolvedObject& subject,
                    const telemetry::LogContext& log, planner::PlanPurpose purpose);
  // While stop() drains: when `plan` only waits a short while for the operator or a settle time
  // (called only while the target is paused by this ShardSet: a transition under way), waits
  // that long and returns true, so the reconcile in flight finishes the transition instead of
  // leaving the target paused for the next instance. False, at once, when not draining, when the
  // wait would not end well within the drain, or once the Lease is lost (also mid-wait).
  bool waitOutDuringDrain(const planner::Plan& plan);
  // Adds the release finalizer, and with it the bound-target annotation when none is recorded
  // and `wanted` names a target kind: one write before the claim. Returns the bound target as it
  // stands afterwards (`bound` unless it was written here).
  k8s::Result<std::string> ensureFinalizer(const k8s::Json& object, const std::string& bound,
                                           const api::ShardSet& wanted);
  // Lets go of `shard_set`'s target (as bound, see kBoundTargetAnnotation); nullopt when done.
  std::optional<ReconcileOutcome> release(const api::ShardSet& shard_set,
                                          const k8s::InvolvedObject& subject,
                                          const telemetry::LogContext& log);
  ReconcileOutcome releaseTarget(const k8s::Json& object, const api::ShardSet& shard_set,
                                 const k8s::InvolvedObject& subject,
                                 const telemetry::LogContext& log);
  k8s::Result<void> setBoundTarget(const k8s::Json& object, const std::string& value);
  // Why transitions of `key` are held (the write refused for good), while they are.
  std::optional<std::string> transitionsHeld(const std::string& key) const;
  void holdTransitions(const std::string& key, std::string why);
  ReconcileOutcome reconcileShardSet(const k8s::Json& object, const telemetry::LogContext& log);
  k8s::Result<void> writeStatus(const k8s::Json& object, const k8s::Json& status);
  void publishMetrics(const api::ShardSet& shard_set, const planner::Plan& plan);
  k8s::ControllerOptions runtimeOptions();
  void degraded(std::string_view reason);

  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  k8s::EventRecorder& events_;
  telemetry::Metrics* metrics_;
  ControllerOptions options_;
  ingestion::IngestionSource* ingestion_;
  // The writes of reconciles (through an OwnWritesClient each), so that their watch echoes do
  // not queue the ShardSet that made them again; and the newest StatefulSet among them, the
  // floor of observe()'s reads.
  OwnWrites own_writes_;

  std::unique_ptr<QueueMetrics> queue_metrics_;
  // The threads a reconcile's reads and writes sent beside its own run on (observe()'s lists,
  // the applier's adjacent writes): a reconcile sends at most PlanApplier::kMaxWritesInFlight
  // requests at once. Declared before runtime_, so that it outlives the workers.
  mutable k8s::TaskPool beside_;  // mutable: observe() is const, as a read
  // The worker loop: its workers wait for the caches (hasSynced) before they take a key.
  k8s::Controller runtime_;
  // One informer per namespace (or one for all); the ShardSet ones are indexed by namespace.
  std::vector<NamedInformer> shard_set_informers_;
  std::vector<NamedInformer> other_informers_;
  // The caches of one namespace ("" = all), among other_informers_.
  struct NamespaceCaches {
    std::string ns;
    const k8s::Informer* prometheuses = nullptr;
    const k8s::Informer* prometheus_agents = nullptr;
    const k8s::Informer* stateful_sets = nullptr;
  };
  std::vector<NamespaceCaches> namespace_caches_;
  // What the last live read of each ShardSet saw: the target's resourceVersion and the newest
  // of its shards'; observeCached() plans from caches only at least as new. `read_live_next`:
  // its last reconcile stopped early, failed or released, so the next one reads live whatever
  // the caches.
  struct LiveRead {
    std::uint64_t target_version = 0;
    std::uint64_t shards_version = 0;
    bool read_live_next = false;
  };
  mutable std::mutex live_reads_mutex_;
  std::map<std::string, LiveRead> live_reads_;
  std::atomic<uint64_t> next_reconcile_id_{1};
  // ShardSets whose writes were refused for good, until when no transition starts.
  mutable std::mutex holds_mutex_;
  struct Hold {
    k8s::Clock::MonotonicTime until;
    std::string why;
  };
  std::map<std::string, Hold> holds_;
  // For waitOutDuringDrain(): when the drain ends (set by stop()), and whether the Lease was lost
  // (set by leadershipLost(), which wakes a waiting reconcile through drain_cv_).
  std::mutex drain_mutex_;
  std::condition_variable drain_cv_;
  std::optional<k8s::Clock::MonotonicTime> drain_deadline_;
  bool leadership_lost_ = false;
};

}  // namespace shardscaler::controller
