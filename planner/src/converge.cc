// PlanMode::Converge: the transitions of docs/design.md §3, each step gated so that an operator
// acting on a stale view cannot lose a shard (§10): with the admission guard enforced nothing
// waits; without it, a transition waits for the operator to acknowledge the pause, and for the
// settle time after the pause (re-attach) and after the last detach (lowering spec.shards).
#include <algorithm>
#include <set>

#include "action_builder.h"
#include "shardscaler/planner/duration.h"

namespace shardscaler::planner {
namespace {

using Clock = std::chrono::system_clock;
using std::chrono::nanoseconds;

// How often a transition waiting for the operator's acknowledgement looks again, beside the
// target status events that wake it.
constexpr auto kAckPoll = std::chrono::milliseconds(500);

bool pausedBy(const Target& t, const api::ShardSet& ss) {
  const std::string* by = t.annotation(kPausedByAnnotation);
  return t.paused && by != nullptr && *by == ss.name;
}

bool stalePausedBy(const Target& t, const api::ShardSet& ss) {
  const std::string* by = t.annotation(kPausedByAnnotation);
  return !t.paused && by != nullptr && *by == ss.name;
}

// The Progressing condition still says a pause went unacknowledged within the timeout: do not
// pause again before that long has passed.
std::optional<nanoseconds> abandonmentHoldLeft(const PlanContext& c) {
  const Condition* p =
      k8s::findStatusCondition(c.input.shard_set.conditions, kConditionProgressing);
  if (p == nullptr || p->reason != kReasonPauseNotAcknowledged) return std::nullopt;
  const auto since = parseAnnotationTime(&p->last_transition_time);
  if (!since) return std::nullopt;
  const auto until = *since + c.input.safety.pause_ack_timeout;
  if (c.input.now >= until) return std::nullopt;
  return until - c.input.now;
}

struct Sorted {
  std::vector<const ShardStatefulSet*> unlabelled, detach, reattach, scaled_away, expired;
  bool need_pause = false;
  // Latest detached-at among retained shards at or above `want`: until the settle time has passed
  // since, the operator may still see one of them attached.
  std::optional<Clock::time_point> last_detach;
  // spec.shards about to drop, and a shard in [want, cur) has no StatefulSet yet: a lagging
  // operator may still create it from the count it last saw, after spec.shards drops, and then
  // delete it as one too many (under Retain, its data; under Delete, a shard that lived for
  // nothing, after the ShardSet reported the scale-down done). spec.shards drops only once the
  // operator acknowledged the pause and the settle time has passed since it, guard or not.
  bool unseen_above_want = false;
  // An attached shard at or above the target's count but below `want` (a quick down-then-up):
  // a sync that started before the pause, with the lower count, may still delete it, and the
  // guard does not stop that: it admits the DELETE from the count it reads, and a raise of
  // spec.shards can commit between that read and the deletion (found by the soak). So, guard or
  // not, spec.shards rises only once the operator acknowledged the pause and the settle time has
  // passed since it.
  bool unexpected_attached = false;
};

Sorted sortShards(const PlanContext& c, int32_t cur, int32_t want, bool retain) {
  const ShardInventory& inv = *c.inventory;
  const int32_t floor = std::max(cur, want);  // nothing below this is ever deleted
  Sorted s;
  for (const auto& a : inv.attached) {
    if (a.object->being_deleted) continue;
    if (!a.guard_labelled) s.unlabelled.push_back(&a);
    if (a.index >= want) {
      if (retain) {
        s.detach.push_back(&a);
        s.need_pause = true;
      } else if (a.index >= floor) {
        s.scaled_away.push_back(&a);
      }
    } else {
      if (a.carries_retention_marks) s.reattach.push_back(&a);
      // Visible to the operator but not expected by it yet: it would delete it.
      if (a.index >= cur) s.need_pause = s.unexpected_attached = true;
    }
  }
  for (const auto& r : inv.retained) {
    if (r.object->being_deleted) continue;
    if (r.index < want) {
      s.reattach.push_back(&r);
      if (r.index >= cur) s.need_pause = true;
      continue;
    }
    s.last_detach = std::max(s.last_detach, r.detached_at);
    if (r.index < cur) {
      // The operator still expects it and would label it back: paused until spec.shards drops.
      s.need_pause = true;
    } else if (r.deadline && r.deadline->expiredAt(c.input.now)) {
      s.expired.push_back(&r);
    }
  }
  if (cur > want) {
    std::set<int32_t> present;
    for (const auto& a : inv.attached) present.insert(a.index);
    for (const auto& r : inv.retained) present.insert(r.index);
    for (int32_t i = want; i < cur && !s.unseen_above_want; ++i) {
      s.unseen_above_want = !present.contains(i);
    }
    if (s.unseen_above_want) s.need_pause = true;
  }
  std::ranges::sort(s.reattach, {}, &ShardStatefulSet::index);
  return s;
}

}  // namespace

void planConverge(PlanContext& c) {
  const Target& target = *c.target;
  const api::ShardSet& ss = c.input.shard_set;
  Decision& d = c.plan.decision;
  const TransitionSafety& safety = c.input.safety;
  const bool guarded = safety.guard_enforced;
  const int32_t cur = target.effectiveShards();
  const int32_t want = d.desired->want;
  const bool retain = d.policy->when_scaled == WhenScaled::Retain;
  const auto now = c.input.now;
  const Sorted s = sortShards(c, cur, want, retain);
  // The fallback's gates: always without the guard, and with it while shards may still appear
  // or a shard the operator does not expect yet is attached.
  const bool gated = !guarded || s.unseen_above_want || s.unexpected_attached;

  ActionBuilder b(c);
  for (const auto* a : s.unlabelled) b.label(*a, false);

  const bool ours = pausedBy(target, ss);
  // may_lower: spec.shards may change and the target resume.
  const bool transition = s.need_pause || !s.detach.empty() || !s.reattach.empty() || cur != want;
  if (transition && !ours) {
    std::optional<nanoseconds> hold = abandonmentHoldLeft(c);
    if (c.input.hold_transitions || hold) {
      d.waiting_for = c.input.hold_transitions ? "a write refused for good to be retried"
                                               : "the hold after an unacknowledged pause to end";
      if (hold) c.requeueWithin(*hold);
      for (const auto* a : s.expired) {
        b.remove(*a, a->deadline, "retention deadline " + a->deadline->toAnnotation() + " passed");
      }
      return;
    }
  }
  if (ours && c.input.hold_transitions) {
    d.abandoned_because = "a write was refused for good";
    planUndo(c, false);
    return;
  }

  // Gates of the fallback (no guard). The operator's status says its target view has the pause;
  // the settle time covers its StatefulSet view and any sync that started before the pause.
  const auto paused_at = parseAnnotationTime(target.annotation(kPausedAtAnnotation));
  bool may_detach = true;
  bool may_reattach = true;
  bool may_lower = true;
  auto wait = [&](std::string why, nanoseconds left) {
    if (d.waiting_for.empty()) d.waiting_for = std::move(why);
    c.requeueWithin(left);
  };
  const bool stamp_pause =
      ours && gated && !paused_at && (s.need_pause || !s.detach.empty() || !s.reattach.empty());
  bool pausing_now = false;
  if ((s.need_pause && !target.paused) || stamp_pause) {
    pausing_now = true;
    // (stamp_pause: paused by us with no readable paused-at, e.g. by an older shardscaler; the
    // settle time cannot be counted from it, so the pause is written again, stamped now.)
    b.pause();
    if (gated) {
      may_detach = may_reattach = false;
      may_lower = false;
      wait("the operator to acknowledge the pause", kAckPoll);
    }
    // With the guard, spec.shards and the resume follow in this plan (see below).
  } else if (ours && gated && (s.need_pause || !s.detach.empty() || !s.reattach.empty())) {
    if (!target.pauseAcknowledged()) {
      const nanoseconds waited = now - *paused_at;
      if (waited >= safety.pause_ack_timeout) {
        d.abandoned_because = "the operator did not acknowledge the pause of " + b.targetText() +
                              " within " + formatPrometheusDuration(safety.pause_ack_timeout) +
                              " (status.paused for generation " +
                              std::to_string(target.generation) + ")";
        planUndo(c, false);
        return;
      }
      may_detach = may_reattach = may_lower = false;
      wait("the operator to acknowledge the pause",
           std::min<nanoseconds>(kAckPoll, safety.pause_ack_timeout - waited));
    } else if (paused_at && now < *paused_at + safety.settle_time) {
      if (!s.reattach.empty()) may_reattach = false;
      if (s.unseen_above_want || s.unexpected_attached) may_lower = false;
      if (!s.reattach.empty() || s.unseen_above_want || s.unexpected_attached) {
        wait("the settle time after the pause", *paused_at + safety.settle_time - now);
      }
    }
  }

  if (may_detach) {
    // A shard detached again (the operator labelled it back) starts a fresh retention period.
    for (const auto* a : s.detach) b.detach(*a, *d.new_deadline);
  }
  if (may_reattach) {
    for (const auto* a : s.reattach) b.reattach(*a);
  }

  // Without the guard, spec.shards changes and the target resumes only from an observation in
  // which every detach and re-attach has already held: these writes act on what was just read.
  // With it, they follow this plan's pause, detaches and re-attaches, which the applier runs in
  // order and stops at the first that fails; the API server then keeps a detached shard detached
  // and an active one undeleted whatever the operator does, so nothing needs to be seen again.
  // After a pause in this plan the update is conditional on the uid only: the pause itself was
  // conditional on the observed resourceVersion, and the operator's status write acknowledging
  // it changes the resourceVersion before the update is sent, for nothing that matters here.
  const bool settled_in_observation =
      !gated ? (!s.need_pause || target.paused || pausing_now)
             : s.detach.empty() && s.reattach.empty() && (!s.need_pause || target.paused);
  // The wait holds back the spec.shards write and the resume, nothing else: with neither left (the
  // count already lowered, the target not paused by us) it would only report Ready late. That is
  // the guarded scale-down's next round, which does not read the guard once the target is at
  // the ShardSet's count, so `guarded` is false in it.
  const bool lowering_left = cur != want || ours || pausing_now;
  if (!guarded && lowering_left && s.last_detach && now < *s.last_detach + safety.settle_time) {
    may_lower = false;
    wait("the settle time after the last detach", *s.last_detach + safety.settle_time - now);
  }
  std::optional<int32_t> shards;
  bool unpause = false;
  if (settled_in_observation && may_lower) {
    if (cur != want) shards = want;
    unpause = ours || pausing_now;
  }
  const bool stale = stalePausedBy(target, ss);
  if (shards || unpause || stale) {
    std::vector<Event> events;
    if (shards && !d.desired->clamp_note.empty()) {
      events.push_back(
          {EventType::Normal, std::string(kReasonScaleClamped), d.desired->clamp_note});
    }
    if (shards && !d.desired->rounding_note.empty()) {
      events.push_back(
          {EventType::Normal, std::string(kReasonRoundedToZoneMultiple), d.desired->rounding_note});
    }
    b.update(
        {.shards = shards,
         .unpause = unpause,
         .clear_paused_by = unpause || stale,
         .scaled_down_at = !retain && shards && *shards < cur ? std::optional(now) : std::nullopt,
         .precondition_resource_version = shards.has_value() && !pausing_now},
        std::move(events));
  }
  // Under Delete the shards above the count go only once the settle time has passed since
  // spec.shards dropped, guard or not: an operator sync that started before, from the higher
  // count, would create a shard deleted under it again, after the ShardSet reported the
  // scale-down done (soak seeds 27805043 and 688847004). The operator, once it sees the count,
  // deletes them itself in the meantime; a stale sync then still finds them in its cache.
  const auto scaled_down_at = parseAnnotationTime(target.annotation(kScaledDownAtAnnotation));
  if (!s.scaled_away.empty() && scaled_down_at && now < *scaled_down_at + safety.settle_time) {
    wait("the settle time after lowering spec.shards", *scaled_down_at + safety.settle_time - now);
  } else {
    for (const auto* a : s.scaled_away) {
      b.remove(*a, std::nullopt,
               "scaled down to " + std::to_string(want) + " shards with whenScaled=Delete");
    }
  }
  for (const auto* a : s.expired) {
    b.remove(*a, a->deadline, "retention deadline " + a->deadline->toAnnotation() + " passed");
  }
}

}  // namespace shardscaler::planner
