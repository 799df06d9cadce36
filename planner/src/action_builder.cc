#include "action_builder.h"

#include "shardscaler/planner/operator_retention.h"

namespace shardscaler::planner {

std::string ActionBuilder::shardText(const ShardStatefulSet& s) {
  return "shard " + std::to_string(s.index) + " (StatefulSet " + s.object->name + ")";
}

std::string ActionBuilder::holdText() const {
  return needsRetentionHold(target_) ? ", holding its spec.shardRetentionPolicy at Retain while "
                                       "claimed (its own saved)"
                                     : "";
}

std::string ActionBuilder::targetText() const {
  return std::string(toString(target_.kind)) + " " + target_.name;
}

Action ActionBuilder::targetAction(ActionType type) const {
  Action a;
  a.type = type;
  a.object_name = target_.name;
  a.uid = target_.uid;
  return a;
}

Action ActionBuilder::statefulSetAction(ActionType type, const ShardStatefulSet& s) const {
  Action a;
  a.type = type;
  a.object_name = s.object->name;
  a.shard_index = s.index;
  a.uid = s.object->uid;
  return a;
}

void ActionBuilder::claim() {
  Action a = targetAction(ActionType::ClaimTarget);
  a.resource_version = target_.resource_version;
  a.merge_patch = patches::claimTarget(target_, ss_.name);
  const std::string* holder = target_.annotation(api::kClaimedByAnnotation);
  a.summary = "claim " + targetText() + " for ShardSet " + ss_.name +
              (holder != nullptr ? " (its claim by ShardSet " + *holder + ", which is gone)" : "") +
              holdText();
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::pause() {
  Action a = targetAction(ActionType::PauseTarget);
  a.resource_version = target_.resource_version;
  a.merge_patch = patches::pauseTarget(target_, ss_.name, c_.input.now);
  a.summary = "pause " + targetText() + holdText();
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::guard(const ShardStatefulSet& s) {
  Action a = statefulSetAction(ActionType::LabelStatefulSet, s);
  a.merge_patch = patches::labelStatefulSet(*s.object, ss_.name);
  a.summary = "guard " + shardText(s);
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::unguard(const ShardStatefulSet& s) {
  Action a = statefulSetAction(ActionType::LabelStatefulSet, s);
  a.merge_patch = patches::labelStatefulSet(*s.object, std::nullopt);
  a.summary = "remove the guard label from " + shardText(s);
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::adopt(const ShardStatefulSet& s) {
  if (ss_.uid.empty()) return;
  auto patch = patches::adopt(*s.object, target_, {ss_.name, ss_.uid});
  if (!patch) return;
  Action a = statefulSetAction(ActionType::AdoptStatefulSet, s);
  a.merge_patch = std::move(*patch);
  a.summary = "move " + shardText(s) + "'s controller ownerReference from " + targetText() +
              " to ShardSet " + ss_.name + ", so that deleting the target leaves it";
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::detach(const ShardStatefulSet& s, const DeletionDeadline& fresh) {
  // While shardscaler holds the target's retention at Retain, the operator's deadline comes from
  // that hold, not from the user's own policy: the detach takes the ShardSet's.
  const DeletionDeadline deadline =
      target_.retention_held ? fresh : s.operatorsOwnDeadline().value_or(fresh);
  Action a = statefulSetAction(ActionType::DetachStatefulSet, s);
  a.merge_patch = patches::detach(*s.object, target_, {ss_.name, ss_.uid}, deadline, c_.input.now);
  a.deadline = deadline;
  const std::string until =
      deadline.isNever() ? "with no deletion deadline" : "until " + deadline.toAnnotation();
  a.summary = "detach " + shardText(s) + ", retained " + until;
  a.events.push_back(
      {EventType::Normal, std::string(kReasonShardRetained),
       "Detached " + shardText(s) + " from " + targetText() + "; retained " + until});
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::reattach(const ShardStatefulSet& s) {
  Action a = statefulSetAction(ActionType::ReattachStatefulSet, s);
  a.merge_patch = patches::reattach(*s.object, target_, {ss_.name, ss_.uid});
  a.summary = "re-attach " + shardText(s);
  a.events.push_back({EventType::Normal, std::string(kReasonShardReattached),
                      "Re-attached retained " + shardText(s) + " to " + targetText()});
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::update(const patches::TargetUpdate& u, std::vector<Event> events) {
  Action a = targetAction(ActionType::UpdateTarget);
  a.merge_patch = patches::updateTarget(target_, u);
  if (u.precondition_resource_version) a.resource_version = target_.resource_version;
  std::vector<std::string> parts;
  if (u.shards) {
    parts.push_back("set spec.shards " + std::to_string(target_.effectiveShards()) + " -> " +
                    std::to_string(*u.shards));
    events.insert(events.begin(),
                  Event{EventType::Normal, std::string(kReasonTargetScaled),
                        "Set " + targetText() + " spec.shards from " +
                            std::to_string(target_.effectiveShards()) + " to " +
                            std::to_string(*u.shards) + (u.unpause ? " and resumed it" : "")});
  }
  if (u.unpause) parts.emplace_back("resume (spec.paused=false)");
  if (u.clear_paused_by && !u.unpause) parts.emplace_back("drop stale paused-by annotation");
  if (u.release_claim) parts.emplace_back("release the claim");
  if (u.release_claim && target_.retention_held) {
    parts.emplace_back("give back its own spec.shardRetentionPolicy");
  }
  if (u.scrape_classes) parts.emplace_back("set spec.scrapeClasses (low-churn re-sharding)");
  for (size_t i = 0; i < parts.size(); ++i) a.summary += (i ? ", " : "") + parts[i];
  a.summary += " on " + targetText();
  a.events = std::move(events);
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::remove(const ShardStatefulSet& s, std::optional<DeletionDeadline> passed,
                           const std::string& why, EventType type, std::string_view reason) {
  Action a = statefulSetAction(ActionType::DeleteStatefulSet, s);
  a.resource_version = s.object->resource_version;
  a.merge_patch = nullptr;
  a.deadline = passed;
  a.summary = "delete " + shardText(s) + " (foreground): " + why;
  a.events.push_back({type, std::string(reason), "Deleted " + shardText(s) + ": " + why});
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::markDraining(const ShardStatefulSet& s, const std::string& why) {
  Action a = statefulSetAction(ActionType::MarkDrainState, s);
  a.merge_patch = patches::markDrain(*s.object, api::kDrainingSinceAnnotation, c_.input.now);
  a.summary = "mark " + shardText(s) + " draining: " + why;
  a.events.push_back({EventType::Normal, std::string(kReasonShardDraining),
                      shardText(s) + " is due but its data is not shipped yet (" + why +
                          "); it is kept until it drains"});
  c_.plan.actions.push_back(std::move(a));
}

void ActionBuilder::markDrained(const ShardStatefulSet& s, const std::string& how) {
  Action a = statefulSetAction(ActionType::MarkDrainState, s);
  a.merge_patch = patches::markDrain(*s.object, api::kDrainedAtAnnotation, c_.input.now);
  a.summary = "mark " + shardText(s) + " drained: " + how;
  a.events.push_back({EventType::Normal, std::string(kReasonShardDrained),
                      shardText(s) + " drained (" + how + ")"});
  c_.plan.actions.push_back(std::move(a));
}

}  // namespace shardscaler::planner
