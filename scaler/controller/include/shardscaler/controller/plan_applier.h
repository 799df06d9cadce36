// Carries out a plan's actions in order (adjacent StatefulSet writes at once), publishing each
// action's Events once it succeeded. It decides nothing: what to write is the plan's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "shardscaler/base/log_context.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::controller {

struct ApplyOutcome {
  std::size_t applied = 0;  // actions that succeeded
  // The first failure in plan order; the rest of the plan was not attempted (beyond writes to
  // other StatefulSets sent together with the failing one).
  std::optional<k8s::Error> error;
  std::string failed_action;  // the failing action's summary
  // The failing action's type and object (a StatefulSet or the target), when one failed.
  std::optional<planner::ActionType> failed_type;
  std::string failed_object;
  // The resourceVersions the API server answered this apply's writes with, the newest of the
  // target's and of the StatefulSets' (0: none written): a read at least this new shows them.
  std::uint64_t target_version = 0;
  std::uint64_t stateful_set_version = 0;

  // A failure that re-reading the objects and planning again resolves: a stale precondition
  // (409), an object that vanished under us (404), or one replaced by another of the same name
  // (the uid precondition inside a merge patch comes back as 422 on metadata.uid).
  bool needsReplan() const;
  // A failure that retrying the same write will not cure (Forbidden, Invalid, BadRequest):
  // a transition it interrupts is undone rather than left paused.
  bool isPermanent() const;
  // The shard guard refused the write (a Forbidden whose message is the guard's): what it read
  // live disagrees with what the plan was made from, for now (a deadline a replica's clock has
  // not reached yet, a shard count that changed). Retried with backoff; not permanent.
  bool refusedByGuard() const;
};

class PlanApplier {
 public:
  // Adjacent StatefulSet writes sent at once, at most: the client keeps a connection for each
  // (service sizes its pool by it), and the API server gains nothing from more of one plan.
  static constexpr std::size_t kMaxWritesInFlight = 4;

  // `log`: the reconcile's fields (key, reconcile_id), on every "applied" line. `write_pool`: runs
  // the writes sent in parallel with the caller's own (up to kMaxWritesInFlight - 1 at once).
  PlanApplier(k8s::KubeClient& client, k8s::EventRecorder& events, base::LogContext log,
              k8s::TaskPool& write_pool)
      : client_(client), events_(events), log_(std::move(log)), write_pool_(write_pool) {}

  // target_resource: where the plan's target actions go. shard_set: the Events' subject.
  ApplyOutcome apply(const planner::Plan& plan, const k8s::Resource& target_resource,
                     const std::string& ns, const k8s::InvolvedObject& shard_set);

 private:
  // The answer's resourceVersion as a revision (0 for a deletion).
  k8s::Result<std::uint64_t> applyOne(const planner::Action& action,
                                      const k8s::Resource& target_resource, const std::string& ns);

  k8s::KubeClient& client_;
  k8s::EventRecorder& events_;
  base::LogContext log_;
  k8s::TaskPool& write_pool_;
};

}  // namespace shardscaler::controller
