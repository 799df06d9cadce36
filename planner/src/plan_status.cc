#include <algorithm>

#include <fmt/format.h>

#include "plan_context.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::planner {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  return fmt::format("{}", fmt::join(parts, sep));
}

std::string count(size_t n, std::string_view what) { return fmt::format("{} {}", n, what); }

struct ConditionText {
  bool status;
  std::string_view reason;  // one of the kReason constants
  std::string message;
};

// The actions in order, runs of the same StatefulSet action counted: "pause Prometheus main;
// detach 2 StatefulSet(s); set spec.shards 5 -> 3, resume ...".
std::string progressMessage(const std::vector<Action>& actions) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < actions.size();) {
    const Action& a = actions[i];
    if (a.isTargetAction()) {
      parts.push_back(a.summary);
      ++i;
      continue;
    }
    size_t run = 0;
    while (i + run < actions.size() && actions[i + run].type == a.type) ++run;
    const std::string_view verb = a.type == ActionType::DetachStatefulSet     ? "detach "
                                  : a.type == ActionType::ReattachStatefulSet ? "re-attach "
                                  : a.type == ActionType::LabelStatefulSet    ? "label "
                                  : a.type == ActionType::AdoptStatefulSet    ? "take ownership of "
                                                                              : "delete ";
    parts.push_back(std::string(verb) + count(run, "StatefulSet(s)"));
    i += run;
  }
  return join(parts, "; ");
}

void convergeConditions(const PlanContext& c, int32_t active, ConditionText& ready,
                        ConditionText& progressing) {
  const Decision& d = c.plan.decision;
  const Target& t = *c.target;
  const int32_t cur = t.effectiveShards();
  const int32_t want = d.desired->want;
  const std::string target_text = std::string(toString(t.kind)) + " " + t.name;
  // Deleting expired shards, guard labels, a claim, dropping a stale annotation or writing the
  // scrape classes alone do not change what is served.
  const auto scales = [](const Action& a) {
    const auto spec = a.merge_patch.find("spec");
    return spec != a.merge_patch.end() && (spec->contains("shards") || spec->contains("paused"));
  };
  const bool scaling =
      !d.waiting_for.empty() || std::ranges::any_of(c.plan.actions, [&](const Action& a) {
        return a.type != ActionType::DeleteStatefulSet && a.type != ActionType::LabelStatefulSet &&
               a.type != ActionType::AdoptStatefulSet && a.type != ActionType::ClaimTarget &&
               !(a.type == ActionType::UpdateTarget && !scales(a));
      });
  std::vector<std::string> notes;
  if (!d.desired->clamp_note.empty()) notes.push_back(d.desired->clamp_note);
  if (!d.desired->rounding_note.empty()) notes.push_back(d.desired->rounding_note);
  if (d.target_paused_by_others) {
    notes.push_back(target_text +
                    " is paused by someone else; the operator acts once it is "
                    "unpaused");
  }
  const std::string suffix = notes.empty() ? "" : fmt::format(" ({})", fmt::join(notes, "; "));
  const std::string active_text = fmt::format("{} of {} shards active", active, want);

  if (scaling) {
    ready = {false, kReasonScaling,
             fmt::format("scaling {} from {} to {} shards (whenScaled={}){}", target_text, cur,
                         want, toString(d.policy->when_scaled), suffix)};
  } else if (cur != want || active != want) {
    ready = {false, kReasonWaitingForShards, active_text + suffix};
  } else {
    ready = {true, kReasonShardsReady,
             fmt::format("{}, {} retained{}", active_text, c.inventory->retained.size(), suffix)};
  }

  if (!d.abandoned_because.empty() || d.waiting_for.starts_with("the hold after")) {
    progressing = {false, kReasonPauseNotAcknowledged,
                   "transition given up and undone: " +
                       (d.abandoned_because.empty() ? d.waiting_for : d.abandoned_because)};
  } else if (!c.plan.actions.empty() || !d.waiting_for.empty()) {
    const bool deleting = std::ranges::any_of(
        c.plan.actions, [](const Action& a) { return a.type == ActionType::DeleteStatefulSet; });
    const std::string_view reason = want < cur   ? kReasonScalingDown
                                    : want > cur ? kReasonScalingUp
                                    : scaling    ? kReasonReconciling
                                    : deleting   ? kReasonDeletingShards
                                                 : kReasonReconciling;
    std::string message = progressMessage(c.plan.actions);
    if (!d.waiting_for.empty()) {
      message += std::string(message.empty() ? "" : "; ") + "waiting for " + d.waiting_for;
    }
    progressing = {true, reason, message};
  } else if (cur != want || active != want) {
    progressing = {true, kReasonWaitingForOperator,
                   active_text + "; waiting for the operator" + suffix};
  } else if (!d.draining.empty()) {
    progressing = {true, kReasonDraining,
                   "waiting for retained shards to ship their data: " + join(d.draining, "; ")};
  } else {
    progressing = {false, kReasonStable, "nothing to do"};
  }
}

// A retained shard as status shows it: Deleting once its deletion started; Draining while it is
// due, not drained and a drain is checked; else Retained. Its last measured lag, while draining.
api::RetainedShard retainedShardStatus(const PlanContext& c, const ShardStatefulSet& s) {
  const std::string* ann = s.object->annotation(api::kDeletionDeadlineAnnotation);
  if (ann == nullptr) ann = s.object->annotation(api::kDeletionTimestampAnnotation);
  api::RetainedShard out{.index = s.index,
                         .stateful_set = s.object->name,
                         .deletion_timestamp = ann ? *ann : std::string()};
  if (s.draining_since) out.draining_since = formatAnnotationTime(*s.draining_since);
  if (s.drained_at) out.drained_at = formatAnnotationTime(*s.drained_at);
  const std::optional<DrainPolicy>& drain = c.plan.decision.drain;
  const bool due = s.deadline && s.deadline->expiredAt(c.input.now);
  if (s.object->being_deleted) {
    out.phase = api::kPhaseDeleting;
  } else if (due && drain && drain->enabled && !s.drained_at) {
    out.phase = api::kPhaseDraining;
    if (auto reading = c.input.drain_readings.find(s.object->name);
        reading != c.input.drain_readings.end()) {
      out.lag_seconds = reading->second.lag_seconds;
    }
  }
  return out;
}

// The target's shards in the status: the count and selector of the active ones, the retained
// ones with their deadlines. Returns the active count; unreadable deadlines go to `bad_deadlines`.
int32_t fillShards(const PlanContext& c, api::ShardSetStatus& st,
                   std::vector<std::string>& bad_deadlines) {
  if (c.target == nullptr) return 0;
  const Target& t = *c.target;
  const int32_t cur = t.effectiveShards();
  st.target_shards = cur;
  std::vector<std::string> pods_of;
  for (const auto& s : c.inventory->attached) {
    if (!s.object->being_deleted && s.index < cur) pods_of.push_back(s.object->name);
  }
  const auto active = static_cast<int32_t>(pods_of.size());
  if (pods_of.empty()) {
    // Nothing active yet: name shard 0, the first the operator creates, so the selector stays
    // valid ("in ()" is not) and bounded whatever spec.shards says.
    pods_of.push_back(statefulSetName(t.kind, t.name, 0));
  }
  st.shards = active;
  st.selector = activeShardPodSelector(t.name, pods_of);
  for (const auto& s : c.inventory->retained) {
    st.retained_shards.push_back(retainedShardStatus(c, s));
    if (!s.deadline) {
      bad_deadlines.push_back(fmt::format("StatefulSet {} (shard {}): {}", s.object->name, s.index,
                                          s.deadline_problem));
    }
  }
  return active;
}

// DrainChecked: whether a due shard's deletion waits for its data to be shipped.
ConditionText drainChecked(const DrainPolicy& drain) {
  if (drain.enabled) {
    const std::string shipped = drain.condition
                                    ? "spec.shardRetentionPolicy.drain.condition holds"
                                    : fmt::format("its remote-write queues caught up (lag <= {})",
                                                  formatPrometheusDuration(drain.max_lag));
    return {true, kReasonDrainsChecked,
            fmt::format("a due shard is deleted only once {} {}, or {} after a check first "
                        "found it undrained (onTimeout: {})",
                        shipped,
                        drain.prometheus_url.empty() ? "as read from its own pods"
                                                     : "at " + drain.prometheus_url,
                        formatPrometheusDuration(drain.timeout), toString(drain.on_timeout))};
  }
  return {false, kReasonDrainDisabled,
          "spec.shardRetentionPolicy.drain.enabled is false: shards are deleted without checking "
          "that their data was shipped"};
}

struct Conditions {
  ConditionText ready;
  ConditionText progressing;
  ConditionText degraded{false, kReasonAsExpected, ""};
};

// Ready, Progressing and Degraded as the plan's mode says.
Conditions modeConditions(const PlanContext& c, int32_t active) {
  const Plan& plan = c.plan;
  const Decision& d = plan.decision;
  const api::ShardSet& ss = c.input.shard_set;
  const std::string target_text = ss.spec.target_ref.kind + " " + ss.spec.target_ref.name;
  Conditions out;
  switch (d.mode) {
    case PlanMode::InvalidSpec: {
      std::vector<std::string> problems;
      problems.reserve(d.problems.size());
      for (const auto& p : d.problems) problems.push_back(p.describe());
      std::string message = "invalid spec: " + join(problems, "; ");
      if (!c.kept_paused_because.empty()) {
        message += "; " + target_text + " " + c.kept_paused_because;
      }
      out.ready = {false, kReasonInvalidSpec, message};
      out.progressing =
          plan.actions.empty()
              ? ConditionText{false, kReasonInvalidSpec, "no changes until the spec is fixed"}
              : ConditionText{true, kReasonRestoringTarget, progressMessage(plan.actions)};
      out.degraded = {true, kReasonInvalidSpec, message};
      break;
    }
    case PlanMode::TargetNotFound: {
      const std::string message = target_text + " not found in namespace " + ss.ns;
      out.ready = {false, kReasonTargetNotFound, message};
      out.progressing = {false, kReasonTargetNotFound, "waiting for the target to exist"};
      out.degraded = {true, kReasonTargetNotFound, message};
      break;
    }
    case PlanMode::TargetDeleting:
      out.ready = {false, kReasonTargetDeleting, target_text + " is being deleted"};
      out.progressing = {false, kReasonTargetDeleting,
                         "no changes while the target is being deleted"};
      break;
    case PlanMode::TargetClaimed: {
      const std::string message = target_text + " is managed by ShardSet " + d.claimed_by +
                                  " (annotation " + std::string(api::kClaimedByAnnotation) +
                                  "); this ShardSet changes nothing";
      out.ready = {false, kReasonTargetClaimed, message};
      out.progressing = {false, kReasonTargetClaimed, "waiting for the claim to go"};
      out.degraded = {true, kReasonTargetClaimed, message};
      break;
    }
    case PlanMode::Release:
      out.ready = {false, kReasonReleasing, "letting go of " + target_text};
      out.progressing = {!plan.actions.empty(), kReasonReleasing, progressMessage(plan.actions)};
      break;
    case PlanMode::Converge:
      convergeConditions(c, active, out.ready, out.progressing);
      break;
  }
  return out;
}

// The OtherWriters condition of a claimed target. A field manager counts only when it last wrote
// after the ShardSet was created: the one that created the target with a shard count is history,
// a GitOps tool re-applying its manifest (or a user's kubectl) since is a second writer.
ConditionText otherWriters(const PlanContext& c) {
  const api::ShardSet& ss = c.input.shard_set;
  std::vector<std::string> managers;
  for (const SpecWriter& w : c.input.target_writers) {
    if (ss.created && w.time && *w.time < *ss.created) continue;
    managers.push_back(fmt::format("field manager \"{}\" ({}{}{})", w.manager,
                                   fmt::join(w.fields, ", "), w.operation.empty() ? "" : ", ",
                                   w.operation));
  }
  std::vector<std::string> hpas;
  hpas.reserve(c.input.target_hpas.size());
  for (const std::string& hpa : c.input.target_hpas) {
    hpas.push_back(fmt::format("HorizontalPodAutoscaler {}", hpa));
  }
  if (managers.empty() && hpas.empty()) {
    return {false, kReasonNoOtherWriters, "only shardscaler writes spec.shards and spec.paused"};
  }
  const std::string target =
      fmt::format("{} {}/{}", ss.spec.target_ref.kind, ss.ns, ss.spec.target_ref.name);
  std::vector<std::string> all = hpas;
  all.insert(all.end(), managers.begin(), managers.end());
  return {true, hpas.empty() ? kReasonFieldManagerConflict : kReasonHPATargetsTarget,
          fmt::format("{} also write{} {}, which ShardSet {} scales: scale with \"kubectl scale "
                      "shardset/{}\" or an HPA on the ShardSet, and leave spec.shards and "
                      "spec.paused out of manifests (README: Running with the Prometheus "
                      "Operator)",
                      fmt::join(all, "; "), all.size() == 1 ? "s" : "", target, ss.name, ss.name)};
}

// Degraded while pauses go unacknowledged: how many, how long the next attempt waits, and what
// to check on the operator's side.
std::string unacknowledgedMessage(const PlanContext& c) {
  const Decision& d = c.plan.decision;
  const std::chrono::nanoseconds hold =
      pauseHold(c.input.safety.pause_ack_timeout, d.unacknowledged_pauses);
  const api::TargetRef& ref = c.input.shard_set.spec.target_ref;
  const std::string plural =
      c.target != nullptr ? targetResource(c.target->kind).resource : "prometheuses";
  const std::string because =
      d.abandoned_because.empty() ? "" : fmt::format(" ({})", d.abandoned_because);
  return fmt::format(
      "the operator did not acknowledge {} {} of {} {} within {}; the next is held {} after the "
      "last (doubling, at most {}). Check that the Prometheus Operator is running and watches "
      "this namespace, that it is v0.60 or later (earlier versions report no observedGeneration "
      "in status.conditions), and that its RBAC lets it update {}/status{}",
      d.unacknowledged_pauses, d.unacknowledged_pauses == 1 ? "pause" : "pauses in a row", ref.kind,
      ref.name, formatPrometheusDuration(c.input.safety.pause_ack_timeout),
      formatPrometheusDuration(hold), formatPrometheusDuration(kMaxPauseHold), plural, because);
}

}  // namespace

void fillStatus(PlanContext& c) {
  Plan& plan = c.plan;
  const Decision& d = plan.decision;
  const api::ShardSet& ss = c.input.shard_set;
  api::ShardSetStatus& st = plan.status;
  st.observed_generation = ss.generation;

  std::vector<std::string> bad_deadlines;
  const int32_t active = fillShards(c, st, bad_deadlines);
  Conditions conditions = modeConditions(c, active);
  ConditionText& degraded = conditions.degraded;
  if (degraded.reason == kReasonAsExpected && d.unacknowledged_pauses > 0) {
    degraded = {true, kReasonPauseNotAcknowledged, unacknowledgedMessage(c)};
  } else if (degraded.reason == kReasonAsExpected && !d.abandoned_because.empty()) {
    degraded = {true, kReasonPauseNotAcknowledged, d.abandoned_because};
  }
  if (degraded.reason == kReasonAsExpected && !d.drain_timed_out.empty()) {
    degraded = {true, kReasonDrainTimedOut, join(d.drain_timed_out, "; ")};
  }
  if (degraded.reason == kReasonAsExpected && !bad_deadlines.empty()) {
    degraded = {true, kReasonInvalidDeletionTimestamp,
                "kept, never deleted on doubt: " + join(bad_deadlines, "; ")};
  }

  const auto now = c.input.now;
  const auto gen = ss.generation;
  const ConditionText& ready = conditions.ready;
  const ConditionText& progressing = conditions.progressing;
  st.conditions = {
      makeCondition(ss.conditions, kConditionReady, ready.status, ready.reason, ready.message, gen,
                    now),
      makeCondition(ss.conditions, kConditionProgressing, progressing.status, progressing.reason,
                    progressing.message, gen, now),
      makeCondition(ss.conditions, kConditionDegraded, degraded.status, degraded.reason,
                    degraded.message, gen, now),
  };
  if (d.drain) {
    const ConditionText checked = drainChecked(*d.drain);
    st.conditions.push_back(makeCondition(ss.conditions, api::kConditionDrainChecked,
                                          checked.status, checked.reason, checked.message, gen,
                                          now));
  }
  if (d.mode == PlanMode::Converge && c.target != nullptr) {
    const ConditionText writers = otherWriters(c);
    st.conditions.push_back(makeCondition(ss.conditions, api::kConditionOtherWriters,
                                          writers.status, writers.reason, writers.message, gen,
                                          now));
    const Condition* was = k8s::findStatusCondition(ss.conditions, api::kConditionOtherWriters);
    if (writers.status &&
        (was == nullptr || was->status != "True" || was->message != writers.message)) {
      plan.events.push_back({EventType::Warning, std::string(writers.reason), writers.message});
    }
  }
  if (auto resharding = reshardingCondition(c)) st.conditions.push_back(std::move(*resharding));
  st.unacknowledged_pauses = d.unacknowledged_pauses;
  st.draining_count = static_cast<int64_t>(std::ranges::count(
      st.retained_shards, std::string(api::kPhaseDraining), &api::RetainedShard::phase));

  // Problems are announced once, when they appear or change, not on every reconcile.
  const Condition* before = k8s::findStatusCondition(ss.conditions, kConditionDegraded);
  if (degraded.status &&
      (before == nullptr || before->status != "True" || before->reason != degraded.reason ||
       before->message != degraded.message)) {
    plan.events.push_back({EventType::Warning, std::string(degraded.reason), degraded.message});
  }

  if (d.mode == PlanMode::Converge) {
    for (const auto& s : c.inventory->retained) {
      if (s.object->being_deleted || s.index < d.desired->want || !s.deadline) continue;
      if (auto wait = s.deadline->timeUntilExpiry(now)) {
        // A deadline centuries ahead (9999) is more whole seconds than nanoseconds can count.
        constexpr auto kLongest =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::nanoseconds::max());
        c.requeueWithin(std::min(*wait, kLongest));
      }
    }
  }
}

}  // namespace shardscaler::planner
