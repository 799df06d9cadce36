#include "shard_set_reconciler.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/api/condition_types.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/controller/status_from_plan.h"
#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/k8s_meta/metadata_patch.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/resharding/resharding.h"

#include "event_type.h"
#include "object_fields.h"

namespace shardscaler::controller {

using k8s::Json;
using k8s::ObjectPtr;

namespace {

k8s::InvolvedObject involvedObject(const Json& shard_set) {
  return k8s::InvolvedObject{
      .api_version = std::string(api::kApiVersion),
      .kind = std::string(api::kShardSetKind),
      .ns = stringAt(shard_set, "metadata", "namespace"),
      .name = stringAt(shard_set, "metadata", "name"),
      .uid = stringAt(shard_set, "metadata", "uid"),
      .resource_version = stringAt(shard_set, "metadata", "resourceVersion"),
  };
}

// "Prometheus/main": the value of api::kBoundTargetAnnotation.
std::string targetRefText(const api::ShardSet& s) {
  return s.spec.target_ref.kind + "/" + s.spec.target_ref.name;
}

// The target the ShardSet is to be bound to: its targetRef, or "" when that names no target.
std::string wantedBinding(const api::ShardSet& s) {
  if (!planner::parseTargetKind(s.spec.target_ref.kind) || s.spec.target_ref.name.empty()) {
    return "";
  }
  return targetRefText(s);
}

// The ShardSet as bound to `bound` ("Kind/name"), for planning its release.
std::optional<api::ShardSet> boundTo(const api::ShardSet& s, const std::string& bound) {
  auto slash = bound.find('/');
  if (slash == std::string::npos || !planner::parseTargetKind(bound.substr(0, slash))) {
    return std::nullopt;
  }
  api::ShardSet copy = s;
  copy.spec.target_ref.kind = bound.substr(0, slash);
  copy.spec.target_ref.name = bound.substr(slash + 1);
  return copy;
}

}  // namespace

ShardSetReconciler::ShardSetReconciler(Parts parts, Options options)
    : parts_(parts), options_(options) {}

k8s::ReconcileOutcome ShardSetReconciler::reconcile(const std::string& key) {
  const uint64_t id = next_reconcile_id_++;
  // Every line of this reconcile carries these, so one reconcile's lines can be picked out.
  const base::LogContext log({{"key", key}, {"reconcile_id", id}});
  const k8s::ObjectPtr object = parts_.caches.shardSet(key);
  if (!object) {
    // Deleted: forget everything about it. Its retained StatefulSets keep their deadlines
    // and owner references; nothing is deleted on its behalf.
    auto slash = key.find('/');
    if (parts_.metrics != nullptr && slash != std::string::npos) {
      parts_.metrics->removeShardSet(key.substr(0, slash), key.substr(slash + 1));
    }
    if (parts_.ingestion != nullptr) parts_.ingestion->untrack(key);
    parts_.reader.forget(key);
    parts_.expectations.forgetShardSet(key);
    log.debug("reconcile: ShardSet gone");
    return {};
  }
  return reconcileShardSet(*object, log);
}

k8s::Result<std::string> ShardSetReconciler::ensureFinalizer(const Json& object,
                                                             const std::string& bound,
                                                             const api::ShardSet& wanted) {
  k8s::meta::MetadataPatch patch(object);
  patch.addFinalizer(api::kReleaseFinalizer);
  if (patch.empty()) return bound;
  // The target it is about to claim, recorded before the claim: a crash between the claim and a
  // later write then cannot leave a claim that a move or a deletion of the ShardSet would not
  // release. A target it never gets to claim is released without a write.
  std::string after = bound;
  if (bound.empty() && !wantedBinding(wanted).empty()) {
    after = wantedBinding(wanted);
    patch.setAnnotation(api::kBoundTargetAnnotation, after);
  }
  auto r = parts_.client.patchReading(api::shardSets(), stringAt(object, "metadata", "namespace"),
                                      stringAt(object, "metadata", "name"), k8s::PatchType::Json,
                                      patch.operations(), "", writeAnswer());
  if (!r) return std::unexpected(r.error());
  if (after != bound) parts_.expectations.recordWrite(api::shardSets(), *r, k8s::objectKey(object));
  return after;
}

k8s::Result<void> ShardSetReconciler::setBoundTarget(const Json& object, const std::string& value) {
  auto r = parts_.client.patchReading(
      api::shardSets(), stringAt(object, "metadata", "namespace"),
      stringAt(object, "metadata", "name"), k8s::PatchType::Merge,
      k8s::meta::annotationMergePatch(
          api::kBoundTargetAnnotation,
          value.empty() ? std::nullopt : std::optional<std::string_view>(value)),
      "", writeAnswer());
  if (!r) return std::unexpected(r.error());
  parts_.expectations.recordWrite(api::shardSets(), *r,
                                  k8s::objectKey(object));  // its echo: shardSetHandlers
  return {};
}

// Lets go of the target `shard_set` names: an interrupted transition undone at the target's own
// shard count, the target resumed, its claim and the guard labels of its active shards dropped.
// Retained StatefulSets stay as they are; without their ShardSet nobody deletes them at their
// deadline, so an Event names them.
std::optional<k8s::ReconcileOutcome> ShardSetReconciler::release(const api::ShardSet& shard_set,
                                                                 const k8s::InvolvedObject& subject,
                                                                 const base::LogContext& log) {
  Rounds rounds = planAndApply(shard_set, subject, log, planner::PlanPurpose::Release);
  if (rounds.stopped_with) return *rounds.stopped_with;
  if (rounds.failure.error) {
    return k8s::ReconcileOutcome{.result = k8s::ReconcileResult::Error,
                                 .error = rounds.failure.error->describe()};
  }
  if (rounds.plan.requeue_after) {  // kept paused for the settle time: not released yet
    return k8s::ReconcileOutcome{.requeue_after = *rounds.plan.requeue_after};
  }
  if (!rounds.plan.status.retained_shards.empty()) {
    std::string names;
    for (const auto& r : rounds.plan.status.retained_shards) {
      names += (names.empty() ? "" : ", ") + r.stateful_set;
    }
    parts_.events.record(subject, k8s::EventType::Warning,
                         std::string(planner::kReasonRetainedShardsOrphaned),
                         planner::orphanedShardsMessage(shard_set, names));
  }
  log.info("released", {{"target", targetRefText(shard_set)}});
  return std::nullopt;
}

k8s::ReconcileOutcome ShardSetReconciler::releaseTarget(const Json& object,
                                                        const api::ShardSet& shard_set,
                                                        const k8s::InvolvedObject& subject,
                                                        const base::LogContext& log) {
  if (!k8s::meta::hasFinalizer(object, api::kReleaseFinalizer)) {
    return {};  // released already; the API server deletes it
  }

  // The target it claimed, whatever the spec says now (it may be invalid).
  const std::string bound = object["metadata"]
                                .value("annotations", Json::object())
                                .value(std::string(api::kBoundTargetAnnotation), "");
  const std::optional<api::ShardSet> as_bound =
      bound.empty() ? std::optional(shard_set) : boundTo(shard_set, bound);
  if (as_bound) {
    if (auto outcome = release(*as_bound, subject, log)) return *outcome;
  }
  auto r = parts_.client.patch(
      api::shardSets(), shard_set.ns, shard_set.name, k8s::PatchType::Json,
      k8s::meta::MetadataPatch(object).removeFinalizer(api::kReleaseFinalizer).operations());
  if (!r && !r.error().is(k8s::ErrorKind::NotFound)) {
    log.warn("removing finalizer failed", {{"error", r.error().describe()}});
    return {.result = k8s::ReconcileResult::Error, .error = r.error().describe()};
  }
  log.info("ShardSet deleted, target released");
  return {};
}

k8s::ReconcileOutcome ShardSetReconciler::reconcileShardSet(const Json& object,
                                                            const base::LogContext& log) {
  auto shard_set = api::decodeShardSet(object);
  if (!shard_set) {
    log.error("not a ShardSet", {{"error", shard_set.error().describe()}});
    degraded("malformed_shardset");
    return {};  // terminal: waiting does not make it a ShardSet
  }
  const k8s::InvolvedObject subject = involvedObject(object);
  if (object["metadata"].contains("deletionTimestamp")) {
    return releaseTarget(object, *shard_set, subject, log);
  }
  auto bound = ensureFinalizer(object,
                               object["metadata"]
                                   .value("annotations", Json::object())
                                   .value(std::string(api::kBoundTargetAnnotation), ""),
                               *shard_set);
  if (!bound) {
    log.error("adding finalizer failed",
              {{"finalizer", api::kReleaseFinalizer}, {"error", bound.error().describe()}});
    degraded("finalizer_failed");
    return {.result = k8s::ReconcileResult::Error, .error = bound.error().describe()};
  }

  // spec.targetRef moved (or became invalid): the target it was bound to is released first, so
  // that it is never left paused or with shards detached. The target it moves to is recorded
  // next, before any plan may claim it: a reconcile that claims it may end before another
  // completes (a claim is confirmed by the next reconcile; a read may fail mid-transition), and a
  // second move must still find it to release.
  const std::string wanted = wantedBinding(*shard_set);
  if (*bound != wanted) {
    if (auto old = bound->empty() ? std::nullopt : boundTo(*shard_set, *bound)) {
      if (auto outcome = release(*old, subject, log)) return *outcome;
    }
    if (auto r = setBoundTarget(object, wanted); !r) {
      return {.result = k8s::ReconcileResult::Error, .error = r.error().describe()};
    }
  }

  Rounds rounds = planAndApply(*shard_set, subject, log, planner::PlanPurpose::Converge);
  if (rounds.stopped_with) return *rounds.stopped_with;
  // Claimed or guarded, confirmed by the next reconcile, which writes the status (Rounds).
  if (rounds.awaits_echoes) return {.requeue_after = Expectations::kEchoWait};

  return report(object, *shard_set, subject, rounds, log);
}

// The status (replaced whole), the plan's Events and the ingestion condition's, the shard count
// metrics and what the ingestion monitor tracks: what a reconcile reports once its rounds end.
k8s::ReconcileOutcome ShardSetReconciler::report(const Json& object, const api::ShardSet& shard_set,
                                                 const k8s::InvolvedObject& subject,
                                                 const Rounds& rounds,
                                                 const base::LogContext& log) {
  const std::string key = k8s::objectKey(object);
  const planner::Plan& plan = rounds.plan;
  const ApplyOutcome& failure = rounds.failure;
  for (const planner::Event& event : plan.events) {
    parts_.events.record(subject, eventTypeOf(event.type), event.reason, event.message);
  }
  std::vector<planner::Event> ingestion_events;
  // A write refused for good stays reported while its transitions are held.
  const std::optional<std::string> refused =
      failure.error
          ? std::optional<std::string>(failure.failed_action + ": " + failure.error->describe())
          : parts_.holds.heldBecause(key);
  Json status = shardSetStatusJson(
      plan, shard_set, parts_.ingestion != nullptr ? parts_.ingestion->snapshot(key) : std::nullopt,
      refused, parts_.clock.now(), &ingestion_events);
  for (const planner::Event& event : ingestion_events) {
    parts_.events.record(subject, eventTypeOf(event.type), event.reason, event.message);
  }
  if (auto written = writeStatus(object, status); !written) {
    log.warn("status write failed", {{"error", written.error().describe()}});
    degraded("status_write_failed");
    if (!failure.error) {
      return {.result = k8s::ReconcileResult::Error, .error = written.error().describe()};
    }
  }
  publishMetrics(shard_set, plan, status);
  if (parts_.ingestion != nullptr) {
    if (auto target = ingestionTarget(shard_set)) {
      target->zones = rounds.zones;
      target->web_tls = rounds.web_tls;
      target->active_shards = plan.status.target_shards;
      parts_.ingestion->track(key, *target);
    } else {
      parts_.ingestion->untrack(key);
    }
  }
  if (failure.error) {
    return {.result = k8s::ReconcileResult::Error, .error = failure.error->describe()};
  }
  k8s::ReconcileOutcome done;
  if (plan.requeue_after) done.requeue_after = *plan.requeue_after;
  // While low churn is asked for or in force, what its rules cover (or what holds them off) is
  // read again now and then: scrape objects change without a word to the ShardSet. Not the
  // plan's requeue, which says what a transition waits for.
  const k8s::Condition* resharding =
      k8s::findStatusCondition(plan.status.conditions, api::kConditionResharding);
  if (shard_set.spec.resharding == api::kReshardingLowChurn ||
      (resharding != nullptr && resharding->status == api::kConditionTrue)) {
    const std::chrono::nanoseconds rescan = resharding::kScrapeObjectsMaxAge;
    done.requeue_after = std::min(done.requeue_after.value_or(rescan), rescan);
  }
  return done;
}

k8s::Result<void> ShardSetReconciler::writeStatus(const Json& object, const Json& status) {
  auto current = object.find("status");
  if (current != object.end() && *current == status) return {};
  // Replace the whole status: a merge patch could not remove fields that no longer apply.
  Json patch = Json::array({{{"op", "add"}, {"path", "/status"}, {"value", status}}});
  auto r = parts_.client.patchReading(api::shardSets(), stringAt(object, "metadata", "namespace"),
                                      stringAt(object, "metadata", "name"), k8s::PatchType::Json,
                                      patch, "status", writeAnswer());
  if (!r) return std::unexpected(r.error());
  return {};
}

void ShardSetReconciler::publishMetrics(const api::ShardSet& shard_set, const planner::Plan& plan,
                                        const Json& status) {
  if (parts_.metrics == nullptr) return;
  const auto& d = plan.decision;
  const int desired =
      d.desired ? d.desired->want : static_cast<int>(shard_set.spec.shards.value_or(0));
  parts_.metrics->setShardCounts(shard_set.ns, shard_set.name, desired, plan.status.shards,
                                 static_cast<int>(plan.status.retained_shards.size()));
  std::vector<telemetry::Metrics::RetainedShardState> retained;
  retained.reserve(plan.status.retained_shards.size());
  for (const api::RetainedShard& shard : plan.status.retained_shards) {
    telemetry::Metrics::RetainedShardState state{
        .shard = shard.index, .stateful_set = shard.stateful_set, .phase = shard.phase};
    if (auto deadline = planner::parseDeletionTimestamp(shard.deletion_timestamp);
        deadline && !deadline->isNever()) {
      const k8s::Timestamp at = deadline->time();
      state.deadline = static_cast<double>(at.seconds.time_since_epoch().count()) +
                       static_cast<double>(at.nanos) / 1e9;
    }
    if (shard.phase == api::kPhaseDraining) {
      state.lag_seconds = shard.lag_seconds;
      if (auto since = k8s::parseRfc3339(shard.draining_since)) {
        state.draining_since = static_cast<double>(since->seconds.time_since_epoch().count()) +
                               static_cast<double>(since->nanos) / 1e9;
      }
    }
    retained.push_back(state);
  }
  parts_.metrics->setRetainedShards(shard_set.ns, shard_set.name, plan.status.shards, retained);

  // The states view strings inside `status`, which outlives the call (Json::value would return
  // copies that die with each iteration).
  std::vector<telemetry::Metrics::ConditionState> conditions;
  const auto listed = status.find("conditions");
  if (listed != status.end() && listed->is_array()) {
    for (const Json& c : *listed) {
      const auto type = c.find("type");
      const auto state = c.find("status");
      const auto reason = c.find("reason");
      if (type == c.end() || state == c.end() || reason == c.end() || !type->is_string() ||
          !state->is_string() || !reason->is_string()) {
        continue;
      }
      conditions.push_back({type->get_ref<const std::string&>(),
                            state->get_ref<const std::string&>(),
                            reason->get_ref<const std::string&>()});
    }
  }
  parts_.metrics->setShardSetConditions(shard_set.ns, shard_set.name, conditions);
  std::optional<double> paused_since;
  if (d.paused_by_us_since) {
    paused_since = std::chrono::duration<double>(d.paused_by_us_since->time_since_epoch()).count();
  }
  parts_.metrics->setTargetPaused(shard_set.ns, shard_set.name, shard_set.spec.target_ref.kind,
                                  shard_set.spec.target_ref.name, paused_since);
  if (auto enforced = parts_.guard_status.enforced(shard_set.ns)) {
    parts_.metrics->setGuardEnforced(shard_set.ns, shard_set.name, *enforced);
  }
}

void ShardSetReconciler::observeTransition(const api::ShardSet& shard_set,
                                           const planner::Plan& plan) {
  const planner::Decision& d = plan.decision;
  if (parts_.metrics == nullptr || !d.target_paused_by_us || !d.current_shards) return;
  const auto resume = std::ranges::find_if(plan.actions, [](const planner::Action& a) {
    return a.type == planner::ActionType::UpdateTarget && a.merge_patch.contains("spec") &&
           a.merge_patch["spec"].contains("paused");
  });
  if (resume == plan.actions.end()) return;
  const bool sets_shards = resume->merge_patch["spec"].contains("shards");
  const int32_t to = sets_shards ? resume->merge_patch["spec"]["shards"].get<int32_t>()
                                 : (d.desired ? d.desired->want : *d.current_shards);
  std::optional<double> seconds;
  if (d.paused_by_us_since) {
    seconds = std::chrono::duration<double>(parts_.clock.now() - *d.paused_by_us_since).count();
  }
  parts_.metrics->observeTransition(
      shard_set.ns, shard_set.name, to < *d.current_shards ? "down" : "up",
      d.abandoned_because.empty() && sets_shards ? "completed" : "undone", seconds);
}

void ShardSetReconciler::degraded(std::string_view reason) {
  if (parts_.metrics != nullptr) parts_.metrics->incDegraded(reason);
}

}  // namespace shardscaler::controller
