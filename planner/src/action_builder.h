// Builds the planner's actions, each with its preconditions, merge patch, summary and Events.
// Private to the planner.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "patches.h"
#include "plan_context.h"

namespace shardscaler::planner {

class ActionBuilder {
 public:
  explicit ActionBuilder(PlanContext& c) : c_(c), target_(*c.target), ss_(c.input.shard_set) {}

  void claim();
  void pause();
  // Puts this ShardSet's guard label on the shard, or takes it off.
  void guard(const ShardStatefulSet& s);
  void unguard(const ShardStatefulSet& s);
  // Every detach starts a fresh life: `fresh` is its deadline unless the operator's own retention
  // set one (ShardStatefulSet::operatorsOwnDeadline), and the drain marks of an earlier life go.
  void detach(const ShardStatefulSet& s, const DeletionDeadline& fresh);
  void reattach(const ShardStatefulSet& s);
  // A retained shard the target still owns (detached by a version before the detach moved the
  // reference): deleting the target would garbage-collect it before its deadline and drain.
  void adopt(const ShardStatefulSet& s);
  // `events` are published after the update succeeded (TargetScaled is added when shards set).
  void update(const patches::TargetUpdate& update, std::vector<Event> events = {});
  void remove(const ShardStatefulSet& s, std::optional<DeletionDeadline> passed,
              const std::string& why, EventType type = EventType::Normal,
              std::string_view reason = kReasonShardDeleted);
  // A due shard's drain marks: found undrained (draining-since, with ShardDraining), or drained
  // (drained-at, with ShardDrained; the guard admits its deletion by it).
  void markDraining(const ShardStatefulSet& s, const std::string& why);
  void markDrained(const ShardStatefulSet& s, const std::string& how);

  std::string targetText() const;
  // ", holding ..." when a claim or pause of the target also holds its shard retention.
  std::string holdText() const;
  static std::string shardText(const ShardStatefulSet& s);

 private:
  Action targetAction(ActionType type) const;
  Action statefulSetAction(ActionType type, const ShardStatefulSet& s) const;

  PlanContext& c_;
  const Target& target_;
  const api::ShardSet& ss_;
};

}  // namespace shardscaler::planner
