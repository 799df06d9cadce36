// The ShardSet reconciler (controller-runtime's Reconciler): one level-triggered pass over one
// ShardSet: its finalizer and bound target, the read-plan-apply rounds, status, Events and
// metrics, and its release on deletion. It never acts on an event's contents, and never deletes
// what the planner keeps.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/base/log_context.h"
#include "shardscaler/controller/expectations.h"
#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/controller/shard_set_controller.h"
#include "shardscaler/ingestion/web_tls.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/reconciler.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/telemetry/metrics.h"

#include "drain_gate.h"
#include "shard_set_caches.h"
#include "shard_set_reader.h"
#include "transition_holds.h"

namespace shardscaler::ingestion {
class IngestionSource;
}  // namespace shardscaler::ingestion

namespace shardscaler::controller {

// Thread-safety: reconcile() may run on several workers at once for different keys (the work
// loop never hands one key to two workers).
class ShardSetReconciler {
 public:
  struct Options {
    // Plan/apply rounds in one reconcile: after a successful round the objects are read again
    // and planned again, so one reconcile usually finishes a whole transition.
    int max_rounds = kDefaultMaxRounds;
    std::chrono::nanoseconds settle_time = planner::TransitionSafety{}.settle_time;
    std::chrono::nanoseconds pause_ack_timeout = planner::TransitionSafety{}.pause_ack_timeout;
    std::chrono::nanoseconds drain_reload_floor = planner::TransitionSafety{}.reload_floor;
  };
  // What a reconcile needs from the rest of the controller; every member must outlive it.
  // metrics and ingestion may be null.
  struct Parts {
    k8s::KubeClient& client;
    const k8s::Clock& clock;
    k8s::EventRecorder& events;
    telemetry::Metrics* metrics;
    ingestion::IngestionSource* ingestion;
    const ShardSetCaches& caches;
    Expectations& expectations;
    ShardSetReader& reader;
    GuardStatusCache& guard_status;
    TransitionHolds& holds;
    DrainGate& drain;
    k8s::TaskPool& side_requests;
  };
  ShardSetReconciler(Parts parts, Options options);

  // One pass over the ShardSet `key`, as the caches hold it.
  k8s::ReconcileOutcome reconcile(const std::string& key);
  // Plans without writing: what a reconcile of this ShardSet would do if spec.shards were
  // `shards` (nullopt = as written). Reads from the API server, not the caches.
  k8s::Result<planner::Plan> dryRun(const std::string& ns, const std::string& name,
                                    std::optional<int32_t> shards);

 private:
  // What planAndApply ended with: the last plan, the write that failed (if any), or the outcome
  // to return at once (a read failed, or too many rounds).
  struct Rounds {
    planner::Plan plan;
    ApplyOutcome failure;
    std::optional<k8s::ReconcileOutcome> stopped_with;
    std::optional<size_t> zones;  // of the target, when found
    ingestion::WebTls web_tls;    // of the target, when found
    // Of the last live read: the target's resourceVersion and the newest of its shards'.
    Expectations::CacheFloor live_read;
    // The last plan claimed the target or guarded shards, and nothing else, and every write
    // held: the rounds end there, without a read, and the versions of live_read are those the
    // writes were answered with. The next reconcile, Expectations::kEchoWait later, plans from the
    // caches once they show them (or reads live), and writes the status; this one writes none.
    bool awaits_echoes = false;
  };

  k8s::ReconcileOutcome reconcileShardSet(const k8s::Json& object, const base::LogContext& log);
  // Adds the release finalizer, and with it the bound-target annotation when none is recorded
  // and `wanted` names a target kind: one write before the claim. Returns the bound target as it
  // stands afterwards (`bound` unless it was written here).
  k8s::Result<std::string> ensureFinalizer(const k8s::Json& object, const std::string& bound,
                                           const api::ShardSet& wanted);
  k8s::Result<void> setBoundTarget(const k8s::Json& object, const std::string& value);
  // Lets go of `shard_set`'s target (as bound); nullopt when done.
  std::optional<k8s::ReconcileOutcome> release(const api::ShardSet& shard_set,
                                               const k8s::InvolvedObject& subject,
                                               const base::LogContext& log);
  k8s::ReconcileOutcome releaseTarget(const k8s::Json& object, const api::ShardSet& shard_set,
                                      const k8s::InvolvedObject& subject,
                                      const base::LogContext& log);
  // The status, Events, metrics and ingestion tracking of a plan that converged (or failed).
  k8s::ReconcileOutcome report(const k8s::Json& object, const api::ShardSet& shard_set,
                               const k8s::InvolvedObject& subject, const Rounds& rounds,
                               const base::LogContext& log);
  k8s::Result<void> writeStatus(const k8s::Json& object, const k8s::Json& status);
  void publishMetrics(const api::ShardSet& shard_set, const planner::Plan& plan,
                      const k8s::Json& status);
  // A plan that resumed the target this ShardSet paused ended a transition: completed (with the
  // new shard count) or undone.
  void observeTransition(const api::ShardSet& shard_set, const planner::Plan& plan);

  planner::PlanInput planInput(const api::ShardSet& shard_set, Observed observed,
                               planner::PlanPurpose purpose) const;
  // The plan of `input`; when it asks whether due shards drained, the plan again with the
  // readings (docs/design/drain.md).
  planner::Plan planWithDrains(planner::PlanInput input) const;
  // Reads, plans and applies until a plan has nothing to do (at most max_rounds + 1 plans).
  // `log` carries the reconcile's key and reconcile_id into every line it and the applier write.
  // A ShardSet at rest is planned from the caches instead (observeCached), when they allow it.
  Rounds planAndApply(const api::ShardSet& shard_set, const k8s::InvolvedObject& subject,
                      const base::LogContext& log, planner::PlanPurpose purpose);
  // The rounds from live reads; unless they stop early or fail, the last one plans nothing to
  // write, from a read that came after every write of the rounds before it.
  Rounds liveRounds(const api::ShardSet& shard_set, const k8s::InvolvedObject& subject,
                    const base::LogContext& log, planner::PlanPurpose purpose);
  // How a round that applied `outcome` goes on: true to plan again; false to stop with `rounds`.
  bool afterApply(const std::string& key, ApplyOutcome outcome, Rounds& rounds,
                  const base::LogContext& log);
  // Sets what the caches of `key` must show before the next reconcile plans from them: what the
  // last read of a live reconcile saw; or, when it stopped early, failed or released a target
  // (`read_live_next`), that the next one reads live too.
  void expectAfter(const std::string& key, const Rounds& rounds, bool read_live_next);
  void degraded(std::string_view reason);

  Parts parts_;
  const Options options_;
  std::atomic<std::uint64_t> next_reconcile_id_{1};
};

}  // namespace shardscaler::controller
