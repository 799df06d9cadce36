// Undoing a transition at the target's current shard count: for an invalid spec, a pause the
// operator never acknowledged, a write refused for good, and the release of a target.
#include <algorithm>

#include "action_builder.h"

namespace shardscaler::planner {

namespace {

// The shards an undo at count `cur` acts on.
struct UndoShards {
  std::vector<const ShardStatefulSet*> reattach;  // below the count and detached, by index
  std::vector<const ShardStatefulSet*> exposed;   // attached at or above the count
  std::vector<const ShardStatefulSet*> unlabel;   // a release's guard labels to remove
  std::optional<std::chrono::system_clock::time_point> last_detach;
};

UndoShards undoShards(const PlanContext& c, int32_t cur, bool release) {
  UndoShards u;
  for (const auto& s : c.inventory->attached) {
    if (s.object->being_deleted) continue;
    if (s.index >= cur) {
      u.exposed.push_back(&s);
    } else if (s.carries_retention_marks) {
      u.reattach.push_back(&s);
    } else if (release && s.guard_labelled) {
      u.unlabel.push_back(&s);
    }
  }
  for (const auto& s : c.inventory->retained) {
    if (s.object->being_deleted) continue;
    if (s.index < cur) {
      u.reattach.push_back(&s);
    } else {
      u.last_detach = std::max(u.last_detach, s.detached_at);
    }
  }
  std::erase_if(u.reattach, [&](const ShardStatefulSet* s) {
    return c.input.reattach_refused.contains(s->object->name);
  });
  std::ranges::sort(u.reattach, {}, &ShardStatefulSet::index);
  return u;
}

// Attached above the target's count while we hold it paused: shards a cut-short scale-up
// re-attached or the operator created. Resuming would let the operator delete them, so they are
// kept (detached) instead; never delete on doubt. Under Retain they get a retention period;
// under Delete they are due now (a shard that still carries a deadline ahead keeps it), so that
// once the target rests at its count it goes as whenScaled=Delete would have it go, after its
// drain. With no readable policy (an invalid spec) they are kept until a person decides.
void keepExposed(const PlanContext& c, ActionBuilder& b,
                 const std::vector<const ShardStatefulSet*>& exposed) {
  const Decision& d = c.plan.decision;
  const bool delete_policy = d.policy && d.policy->when_scaled == WhenScaled::Delete;
  for (const auto* s : exposed) {
    DeletionDeadline deadline = d.new_deadline.value_or(DeletionDeadline::never());
    if (delete_policy) {
      deadline = s->deadline && !s->deadline->expiredAt(c.input.now)
                     ? *s->deadline
                     : DeletionDeadline::at(Timestamp::fromTimePoint(
                           std::chrono::floor<std::chrono::seconds>(c.input.now)));
    }
    b.detach(*s, deadline);
  }
}

// Resume only once the operator can no longer see attached a shard detached above its count.
bool mayResume(PlanContext& c, bool detached_now, const UndoShards& u) {
  const TransitionSafety& safety = c.input.safety;
  if (safety.guard_enforced) return true;
  if (detached_now) {
    c.requeueWithin(safety.settle_time);  // a later round waits out the settle time
    return false;
  }
  if (u.last_detach && c.input.now < *u.last_detach + safety.settle_time) {
    c.requeueWithin(*u.last_detach + safety.settle_time - c.input.now);
    return false;
  }
  return true;
}

// Low-churn rules leave with the claim: nothing would keep their table at the target's shard
// count once the ShardSet is gone.
std::optional<nlohmann::json> releaseResharding(PlanContext& c, int32_t cur,
                                                std::vector<Event>& events) {
  const resharding::ReshardingOutcome& r = planResharding(c, cur, /*release=*/true);
  if (!r.scrape_classes) return std::nullopt;
  c.resharding_written = true;
  for (const auto& e : r.events) {
    events.push_back({e.warning ? EventType::Warning : EventType::Normal, e.reason, e.message});
  }
  return r.scrape_classes;
}

}  // namespace

void planUndo(PlanContext& c, UndoFor why) {
  const bool release = why == UndoFor::Release;
  const Target& target = *c.target;
  const api::ShardSet& ss = c.input.shard_set;
  const int32_t cur = target.effectiveShards();
  const std::string* paused_by = target.annotation(api::kPausedByAnnotation);
  const bool mine = paused_by != nullptr && *paused_by == ss.name;
  const bool ours = target.paused && mine;
  const std::string* claim = target.annotation(api::kClaimedByAnnotation);
  const UndoShards u = undoShards(c, cur, release);

  ActionBuilder b(c);
  const bool detached_now = ours && !u.exposed.empty();
  if (detached_now) keepExposed(c, b, u.exposed);
  for (const auto* s : u.reattach) b.reattach(*s);
  for (const auto* s : u.unlabel) b.unguard(*s);

  const bool may_resume = mayResume(c, detached_now, u);
  if (ours && !may_resume) {
    c.kept_paused_because =
        "kept paused for the settle time after detaching shards above its shard count";
  }
  const bool release_claim =
      release && claim != nullptr && *claim == ss.name && (!ours || may_resume);
  const bool unpause = ours && may_resume;
  const bool clear = (mine && !target.paused) || unpause;
  std::optional<nlohmann::json> classes;
  std::vector<Event> events;
  if (release_claim) classes = releaseResharding(c, cur, events);
  if (unpause || clear || release_claim) {
    const bool with_classes = classes.has_value();
    b.update({.unpause = unpause,
              .clear_paused_by = clear,
              .release_claim = release_claim,
              .precondition_resource_version = with_classes,
              .scrape_classes = std::move(classes)},
             std::move(events));
  }
}

}  // namespace shardscaler::planner
