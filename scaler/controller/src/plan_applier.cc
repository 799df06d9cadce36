#include "shardscaler/controller/plan_applier.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <vector>

#include "shardscaler/k8s_client/store.h"

#include "event_type.h"
#include "object_fields.h"

namespace shardscaler::controller {
namespace {

// Fault injection for the crash-safety tests: with SHARDSCALER_FAULT_KILL_AFTER_WRITES=N the
// process SIGKILLs itself right after its N-th successful write, so every point between two
// writes of a transition can be hit exactly. Unset (always, outside those tests): no effect.
void countWriteForFaultInjection() {
  static const long kill_after = [] {
    const char* v = std::getenv("SHARDSCALER_FAULT_KILL_AFTER_WRITES");
    return v != nullptr ? std::strtol(v, nullptr, 10) : 0L;
  }();
  static std::atomic<long> writes{0};
  if (kill_after > 0 && ++writes == kill_after) {
    base::logEvent(base::LogLevel::Warn, "fault injection: SIGKILL",
                   {{"after_writes", kill_after}});
    spdlog::default_logger()->flush();
    raise(SIGKILL);
  }
}

}  // namespace

using planner::ActionType;

bool ApplyOutcome::needsReplan() const {
  if (!error) return false;
  if (error->is(k8s::ErrorKind::Conflict) || error->is(k8s::ErrorKind::NotFound)) return true;
  // "metadata.uid: Invalid value: ...: field is immutable": the merge patch's uid precondition
  // met an object recreated under the same name.
  return error->is(k8s::ErrorKind::Invalid) &&
         error->message.find("metadata.uid") != std::string::npos;
}

bool ApplyOutcome::refusedByGuard() const {
  return error && error->is(k8s::ErrorKind::Forbidden) &&
         error->message.find(api::kGuardDenialPrefix) != std::string::npos;
}

bool ApplyOutcome::isPermanent() const {
  if (!error || needsReplan() || refusedByGuard()) return false;
  return error->is(k8s::ErrorKind::Forbidden) || error->is(k8s::ErrorKind::Invalid) ||
         error->is(k8s::ErrorKind::BadRequest) || error->is(k8s::ErrorKind::Unauthorized);
}

namespace {

// Writes to different StatefulSets that the plan puts next to each other (detaches, re-attaches,
// guard labels) depend on nothing but the observation: they are sent at once. Deletions stay one
// at a time, and a target write is never sent beside anything, so the plan's order between the
// target and its shards holds.
bool concurrent(const planner::Action& a) {
  return a.type == ActionType::DetachStatefulSet || a.type == ActionType::ReattachStatefulSet ||
         a.type == ActionType::LabelStatefulSet || a.type == ActionType::AdoptStatefulSet;
}

}  // namespace

ApplyOutcome PlanApplier::apply(const planner::Plan& plan, const k8s::Resource& target_resource,
                                const std::string& ns, const k8s::InvolvedObject& shard_set) {
  ApplyOutcome outcome;
  const auto& actions = plan.actions;
  for (std::size_t first = 0; first < actions.size();) {
    std::size_t end = first + 1;
    while (concurrent(actions[first]) && end < actions.size() && concurrent(actions[end])) ++end;
    std::vector<k8s::Result<std::uint64_t>> results;
    results.reserve(end - first);
    if (end - first == 1) {
      results.push_back(applyOne(actions[first], target_resource, ns));
    } else {
      // At most kMaxWritesInFlight at once, each sender taking the next write: a first claim
      // labels every shard, and a connection per write beyond what the client keeps would cost
      // both sides a TLS handshake.
      results.resize(end - first, k8s::Result<std::uint64_t>{0});
      std::atomic<std::size_t> next{first};
      auto send = [&] {
        for (std::size_t i = next++; i < end; i = next++) {
          results[i - first] = applyOne(actions[i], target_resource, ns);
        }
      };
      std::vector<std::future<void>> senders;
      const std::size_t n = std::min(end - first, kMaxWritesInFlight);
      senders.reserve(n - 1);
      for (std::size_t s = 1; s < n; ++s) senders.push_back(write_pool_.submit(send));
      send();
      for (auto& f : senders) f.get();
    }
    // Every write that succeeded is reported; the first failure (in plan order) ends the plan.
    for (std::size_t i = first; i < end; ++i) {
      const planner::Action& action = actions[i];
      auto& result = results[i - first];
      if (!result) {
        if (!outcome.error) {
          outcome.error = result.error();
          outcome.failed_action = action.summary;
          outcome.failed_type = action.type;
          outcome.failed_object = action.object_name;
        }
        continue;
      }
      log_.info("applied", {{"action", action.summary}});
      std::uint64_t& newest =
          action.isTargetAction() ? outcome.target_version : outcome.stateful_set_version;
      newest = std::max(newest, *result);
      countWriteForFaultInjection();
      for (const planner::Event& event : action.events) {
        events_.record(shard_set, eventTypeOf(event.type), event.reason, event.message);
      }
      ++outcome.applied;
    }
    if (outcome.error) return outcome;
    first = end;
  }
  return outcome;
}

k8s::Result<std::uint64_t> PlanApplier::applyOne(const planner::Action& action,
                                                 const k8s::Resource& target_resource,
                                                 const std::string& ns) {
  switch (action.type) {
    case ActionType::ClaimTarget:
    case ActionType::PauseTarget:
    case ActionType::UpdateTarget: {
      auto r = client_.patchReading(target_resource, ns, action.object_name, k8s::PatchType::Merge,
                                    action.merge_patch, "", writeAnswer());
      if (!r) return std::unexpected(r.error());
      return revisionOf(k8s::resourceVersionOf(*r));
    }
    case ActionType::LabelStatefulSet:
    case ActionType::DetachStatefulSet:
    case ActionType::ReattachStatefulSet:
    case ActionType::MarkDrainState:
    case ActionType::OrphanStatefulSet:
    case ActionType::AdoptStatefulSet: {
      auto r = client_.patchReading(k8s::resources::statefulSets(), ns, action.object_name,
                                    k8s::PatchType::Merge, action.merge_patch, "", writeAnswer());
      if (!r) return std::unexpected(r.error());
      return revisionOf(k8s::resourceVersionOf(*r));
    }
    case ActionType::DeleteStatefulSet: {
      k8s::DeleteOptions options{.propagation_policy = "Foreground",
                                 .precondition_uid = action.uid};
      if (!action.resource_version.empty()) {
        options.precondition_resource_version = action.resource_version;
      }
      auto r = client_.remove(k8s::resources::statefulSets(), ns, action.object_name, options);
      // Already gone (the operator deleting its excess shards races us): the goal is met.
      if (!r && !r.error().is(k8s::ErrorKind::NotFound)) return std::unexpected(r.error());
      return 0;
    }
  }
  return 0;
}

}  // namespace shardscaler::controller
