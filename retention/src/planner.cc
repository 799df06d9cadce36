#include "shardscaler/retention/planner.h"

#include <algorithm>

#include "shardscaler/retention/duration.h"

#include "patches.h"
#include "plan_context.h"

namespace shardscaler::retention {
namespace {

std::string shardText(const ShardStatefulSet& s) {
  return "shard " + std::to_string(s.index) + " (StatefulSet " + s.object->name + ")";
}

void addProblems(std::vector<FieldError>& into, const std::vector<FieldError>& from) {
  for (const auto& e : from) {
    if (std::ranges::find(into, e) == into.end()) into.push_back(e);
  }
}

// Builds the ordered actions; each helper appends one action with its events.
class ActionBuilder {
 public:
  ActionBuilder(PlanContext& c) : c_(c), target_(*c.target), ss_(c.input.shard_set) {}

  void pause() {
    Action a = targetAction(ActionType::PauseTarget);
    a.resource_version = target_.resource_version;
    a.merge_patch = patches::pauseTarget(target_, ss_.name);
    a.summary = "pause " + targetText();
    c_.plan.actions.push_back(std::move(a));
  }

  void detach(const ShardStatefulSet& s, const DeletionDeadline& deadline) {
    Action a = statefulSetAction(ActionType::DetachStatefulSet, s);
    a.merge_patch = patches::detach(*s.object, target_, ss_.name, deadline);
    a.deadline = deadline;
    const std::string until =
        deadline.isNever() ? "with no deletion deadline" : "until " + deadline.toAnnotation();
    a.summary = "detach " + shardText(s) + ", retained " + until;
    a.events.push_back(
        {EventType::Normal, std::string(kReasonShardRetained),
         "Detached " + shardText(s) + " from " + targetText() + "; retained " + until});
    c_.plan.actions.push_back(std::move(a));
  }

  void reattach(const ShardStatefulSet& s) {
    Action a = statefulSetAction(ActionType::ReattachStatefulSet, s);
    a.merge_patch = patches::reattach(*s.object, target_);
    a.summary = "re-attach " + shardText(s);
    a.events.push_back({EventType::Normal, std::string(kReasonShardReattached),
                        "Re-attached retained " + shardText(s) + " to " + targetText()});
    c_.plan.actions.push_back(std::move(a));
  }

  void update(std::optional<int32_t> shards, bool unpause, bool clear_paused_by,
              std::vector<Event> events) {
    Action a = targetAction(ActionType::UpdateTarget);
    a.merge_patch = patches::updateTarget(target_, shards, unpause, clear_paused_by);
    std::vector<std::string> parts;
    if (shards) {
      parts.push_back("set spec.shards " + std::to_string(target_.effectiveShards()) + " -> " +
                      std::to_string(*shards));
      events.insert(events.begin(),
                    Event{EventType::Normal, std::string(kReasonTargetScaled),
                          "Set " + targetText() + " spec.shards from " +
                              std::to_string(target_.effectiveShards()) + " to " +
                              std::to_string(*shards) + (unpause ? " and resumed it" : "")});
    }
    if (unpause) parts.emplace_back("resume (spec.paused=false)");
    if (clear_paused_by && !unpause) parts.emplace_back("drop stale paused-by annotation");
    for (size_t i = 0; i < parts.size(); ++i) a.summary += (i ? ", " : "") + parts[i];
    a.summary += " on " + targetText();
    a.events = std::move(events);
    c_.plan.actions.push_back(std::move(a));
  }

  void remove(const ShardStatefulSet& s, std::optional<DeletionDeadline> passed,
              const std::string& why) {
    Action a = statefulSetAction(ActionType::DeleteStatefulSet, s);
    a.resource_version = s.object->resource_version;
    a.merge_patch = nullptr;
    a.deadline = passed;
    a.summary = "delete " + shardText(s) + " (foreground): " + why;
    a.events.push_back({EventType::Normal, std::string(kReasonShardDeleted),
                        "Deleted " + shardText(s) + ": " + why});
    c_.plan.actions.push_back(std::move(a));
  }

  std::string targetText() const {
    return std::string(toString(target_.kind)) + " " + target_.name;
  }

 private:
  Action targetAction(ActionType type) const {
    Action a;
    a.type = type;
    a.object_name = target_.name;
    a.uid = target_.uid;
    return a;
  }

  Action statefulSetAction(ActionType type, const ShardStatefulSet& s) const {
    Action a;
    a.type = type;
    a.object_name = s.object->name;
    a.shard_index = s.index;
    a.uid = s.object->uid;
    return a;
  }

  PlanContext& c_;
  const Target& target_;
  const ShardSet& ss_;
};

bool pausedByUs(const Target& t, const ShardSet& ss) {
  auto it = t.annotations.find(kPausedByAnnotation);
  return t.paused && it != t.annotations.end() && it->second == ss.name;
}

bool stalePausedBy(const Target& t, const ShardSet& ss) {
  auto it = t.annotations.find(kPausedByAnnotation);
  return !t.paused && it != t.annotations.end() && it->second == ss.name;
}

void planConverge(PlanContext& c) {
  const Target& target = *c.target;
  const ShardSet& ss = c.input.shard_set;
  const Decision& d = c.plan.decision;
  const ShardInventory& inv = *c.inventory;
  const int32_t cur = target.effectiveShards();
  const int32_t want = d.desired->want;
  const int32_t floor = std::max(cur, want);  // nothing below this is ever deleted
  const bool retain = d.policy->when_scaled == WhenScaled::Retain;
  const auto now = c.input.now;

  std::vector<const ShardStatefulSet*> detach, reattach, scaled_away, expired;
  bool need_pause = false;
  for (const auto& s : inv.attached) {
    if (s.object->being_deleted) continue;
    if (s.index >= want) {
      if (retain) {
        detach.push_back(&s);
      } else if (s.index >= floor) {
        scaled_away.push_back(&s);
      }
    } else {
      if (s.carries_retention_marks) reattach.push_back(&s);
      // Visible to the operator but not expected by it yet: it would delete it before the
      // new spec.shards lands.
      if (s.index >= cur) need_pause = true;
    }
  }
  for (const auto& s : inv.retained) {
    if (s.object->being_deleted) continue;
    if (s.index < want) {
      reattach.push_back(&s);
      if (s.index >= cur) need_pause = true;
    } else if (s.index >= floor && s.deadline && s.deadline->expiredAt(now)) {
      expired.push_back(&s);
    }
  }
  if (!detach.empty()) need_pause = true;
  std::ranges::sort(reattach, {}, &ShardStatefulSet::index);

  ActionBuilder b(c);
  bool ours = pausedByUs(target, ss);
  if (need_pause && !target.paused) {
    b.pause();
    ours = true;
  }
  for (const auto* s : detach) {
    // Detached before and re-labelled by the operator: keep the deadline first given.
    const DeletionDeadline deadline =
        s->carries_retention_marks && s->deadline ? *s->deadline : *d.new_deadline;
    b.detach(*s, deadline);
  }
  for (const auto* s : reattach) b.reattach(*s);

  const bool stale = stalePausedBy(target, ss);
  const std::optional<int32_t> shards = cur != want ? std::optional(want) : std::nullopt;
  if (shards || ours || stale) {
    std::vector<Event> events;
    if (shards && !d.desired->clamp_note.empty()) {
      events.push_back(
          {EventType::Normal, std::string(kReasonScaleClamped), d.desired->clamp_note});
    }
    if (shards && !d.desired->rounding_note.empty()) {
      events.push_back(
          {EventType::Normal, std::string(kReasonRoundedToZoneMultiple), d.desired->rounding_note});
    }
    b.update(shards, ours, ours || stale, std::move(events));
  }
  for (const auto* s : scaled_away) {
    b.remove(*s, std::nullopt,
             "scaled down to " + std::to_string(want) + " shards with whenScaled=Delete");
  }
  for (const auto* s : expired) {
    b.remove(*s, s->deadline, "retention deadline " + s->deadline->toAnnotation() + " passed");
  }
}

// InvalidSpec with the target present: undo what an interrupted plan left, write nothing else.
void planRestore(PlanContext& c) {
  const Target& target = *c.target;
  const ShardSet& ss = c.input.shard_set;
  const int32_t cur = target.effectiveShards();
  ActionBuilder b(c);
  std::vector<const ShardStatefulSet*> reattach;
  std::vector<std::string> exposed;
  for (const auto& s : c.inventory->attached) {
    if (s.object->being_deleted) continue;
    if (s.index < cur && s.carries_retention_marks) reattach.push_back(&s);
    if (s.index >= cur) exposed.push_back(s.object->name);
  }
  for (const auto& s : c.inventory->retained) {
    if (!s.object->being_deleted && s.index < cur) reattach.push_back(&s);
  }
  std::ranges::sort(reattach, {}, &ShardStatefulSet::index);
  for (const auto* s : reattach) b.reattach(*s);

  const bool ours = pausedByUs(target, ss);
  if (ours && !exposed.empty()) {
    c.kept_paused_because = "left paused: resuming it would let the operator delete";
    for (const auto& n : exposed) c.kept_paused_because += " " + n;
    return;
  }
  if (ours || stalePausedBy(target, ss)) b.update(std::nullopt, ours, true, {});
}

}  // namespace

std::string_view toString(PlanMode mode) {
  switch (mode) {
    case PlanMode::Converge:
      return "Converge";
    case PlanMode::InvalidSpec:
      return "InvalidSpec";
    case PlanMode::TargetNotFound:
      return "TargetNotFound";
    case PlanMode::TargetDeleting:
      return "TargetDeleting";
  }
  return "Unknown";
}

std::string_view toString(ActionType type) {
  switch (type) {
    case ActionType::PauseTarget:
      return "PauseTarget";
    case ActionType::UpdateTarget:
      return "UpdateTarget";
    case ActionType::DetachStatefulSet:
      return "DetachStatefulSet";
    case ActionType::ReattachStatefulSet:
      return "ReattachStatefulSet";
    case ActionType::DeleteStatefulSet:
      return "DeleteStatefulSet";
  }
  return "Unknown";
}

Plan planShardSet(const PlanInput& input) {
  const ShardSet& ss = input.shard_set;
  Plan plan;
  PlanContext c(input, plan);
  Decision& d = plan.decision;

  d.problems = ss.spec_errors;
  const auto kind = parseTargetKind(ss.target_kind);
  if (ss.target_kind.empty()) {
    addProblems(d.problems, {{"spec.targetRef.kind", "required"}});
  } else if (!kind) {
    addProblems(d.problems,
                {{"spec.targetRef.kind",
                  "must be Prometheus or PrometheusAgent, got \"" + ss.target_kind + "\""}});
  }
  if (ss.target_name.empty()) addProblems(d.problems, {{"spec.targetRef.name", "required"}});
  addProblems(d.problems, validateShardSetPolicy(ss));

  if (kind && input.target && input.target->kind == *kind && input.target->name == ss.target_name &&
      (input.target->ns.empty() || ss.ns.empty() || input.target->ns == ss.ns)) {
    c.target = &*input.target;
  }
  std::optional<size_t> zones;
  if (c.target != nullptr) {
    const Target& t = *c.target;
    for (const auto& e : t.spec_errors) addProblems(d.problems, {{"target." + e.field, e.message}});
    zones = t.topologyZones();
    d.current_shards = t.effectiveShards();
    d.target_paused_by_us = pausedByUs(t, ss);
    d.target_paused_by_others = t.paused && !d.target_paused_by_us;
    c.inventory = takeInventory(ss, t, input.stateful_sets);
    if (auto p = resolveRetentionPolicy(ss, t)) {
      d.policy = *p;
      if (p->when_scaled == WhenScaled::Retain)
        d.new_deadline = deadlineAfter(input.now, p->period);
    } else {
      addProblems(d.problems, p.error());
    }
  }
  if (auto w = desiredShards(ss.shards, ss.min_shards, ss.max_shards, zones)) {
    d.desired = *w;
  } else {
    addProblems(d.problems, w.error());
  }

  if (!d.problems.empty()) {
    d.mode = PlanMode::InvalidSpec;
    if (c.target != nullptr && !c.target->being_deleted) planRestore(c);
  } else if (c.target == nullptr) {
    d.mode = PlanMode::TargetNotFound;
  } else if (c.target->being_deleted) {
    d.mode = PlanMode::TargetDeleting;
  } else {
    d.mode = PlanMode::Converge;
    planConverge(c);
  }
  fillStatus(c);
  return plan;
}

std::string describe(const Plan& plan) {
  const Decision& d = plan.decision;
  std::string out = "mode: " + std::string(toString(d.mode)) + "\n";
  if (d.current_shards) out += "target shards: " + std::to_string(*d.current_shards) + "\n";
  if (d.desired) {
    out += "desired shards: " + std::to_string(d.desired->want) + " (spec.shards " +
           std::to_string(d.desired->requested) + ")\n";
    if (!d.desired->clamp_note.empty()) out += "  " + d.desired->clamp_note + "\n";
    if (!d.desired->rounding_note.empty()) out += "  " + d.desired->rounding_note + "\n";
  }
  if (d.policy) {
    out += "whenScaled: " + std::string(toString(d.policy->when_scaled)) + " (from " +
           d.policy->when_scaled_source + ")\n";
    if (d.new_deadline) {
      out +=
          "retention: " +
          (d.policy->period ? formatPrometheusDuration(*d.policy->period) : std::string("never")) +
          " (from " + d.policy->period_source + "), a shard detached now is kept until " +
          d.new_deadline->toAnnotation() + "\n";
    }
  }
  for (const auto& p : d.problems) out += "problem: " + p.describe() + "\n";
  if (plan.actions.empty()) out += "no changes\n";
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    out += std::to_string(i + 1) + ". " + plan.actions[i].summary + "\n";
  }
  return out;
}

}  // namespace shardscaler::retention
