// Due shards (retained, out of the count, past their deadline) and the drain (docs/design.md
// docs/design/drain.md): without a drain a due shard is deleted at once; with one, only once its
// data is shipped (the condition held: drained-at), or once the timeout passed under onTimeout
// Delete. An undrained shard is kept, marked draining-since at the first reading that finds it
// undrained (the timeout counts from there), and looked at again; a reading that failed counts for
// nothing.
#include "drain.h"

#include <algorithm>
#include <cstdint>

#include "shardscaler/planner/duration.h"

namespace shardscaler::planner {
namespace {

using std::chrono::nanoseconds;

// How often a draining shard is checked again.
constexpr auto kDrainPoll = std::chrono::seconds(5);
// From the drained-at mark to the round that deletes.
constexpr auto kDrainedToDelete = std::chrono::seconds(1);

std::string deadlineText(const ShardStatefulSet& shard) {
  return "retention deadline " + shard.deadline->toAnnotation() + " passed";
}

// When the shard became due: its deadline (one before 1677 held at the start of time).
std::chrono::system_clock::time_point dueAt(const ShardStatefulSet& shard) {
  return shard.deadline->timePoint();
}

// The surviving shards scrape a due shard's targets once they reloaded the configuration the
// operator wrote for the lower count; deleted before that, the shard leaves those targets
// unscraped. So a drained or timed-out shard goes only once every survivor's pod reloaded after
// the later of its detach and the last lowering of spec.shards, or once the floor has passed
// since then. Returns false (and says so, and when to look again) while it waits.
bool survivorsTookOver(PlanContext& context, const ShardStatefulSet& shard,
                       const DrainReading& reading) {
  std::optional<std::chrono::system_clock::time_point> left = shard.detached_at;
  if (auto lowered =
          parseAnnotationTime(context.target->annotation(api::kScaledDownAtAnnotation))) {
    left = std::max(left, lowered);
  }
  if (!left) return true;  // detached long ago, by a version that did not record when
  const auto now = context.input.now;
  const nanoseconds reload_floor = context.input.safety.reload_floor;
  const auto floor = addSaturating(*left, reload_floor);
  if (now >= floor) return true;
  if (reading.survivors_reloaded_at && *reading.survivors_reloaded_at > *left) return true;
  context.plan.decision.draining.push_back(
      ActionBuilder::shardText(shard) +
      ": waiting for the surviving shards to reload their configuration, so that they scrape "
      "its targets before it goes (at most " +
      formatPrometheusDuration(reload_floor) + " after it left the count)");
  context.requeueWithin(std::min<nanoseconds>(kDrainPoll, floor - now));
  return false;
}

// One due shard under an enabled drain.
void planDrain(PlanContext& context, ActionBuilder& writes, const ShardStatefulSet& shard,
               const DrainPolicy& drain) {
  Decision& decision = context.plan.decision;
  const auto now = context.input.now;
  if (shard.drained_at) {
    // Drained earlier (a crash between the mark and the deletion): nothing new was appended since,
    // a detached shard scrapes nothing.
    writes.remove(shard, shard.deadline,
                  deadlineText(shard) + ", drained at " + formatAnnotationTime(*shard.drained_at));
    return;
  }
  if (!drain.condition) {
    // A lag read sooner could be one that froze small when the shard stopped appending while its
    // receiver was down; by now the queue's wait has outgrown maxLag if anything is pending.
    const auto readable_at = addSaturating(dueAt(shard), drain.max_lag);
    if (now < readable_at) {
      decision.draining.push_back(ActionBuilder::shardText(shard) +
                                  ": its remote-write lag is read once it has been due " +
                                  formatPrometheusDuration(drain.max_lag) + " (maxLagSeconds)");
      context.requeueWithin(readable_at - now);
      return;
    }
  }
  const auto reading = context.input.drain_readings.find(shard.object->name);
  if (reading == context.input.drain_readings.end()) {
    decision.drain_checks.push_back({.stateful_set = shard.object->name,
                                     .index = shard.index,
                                     .detached_at = shard.detached_at,
                                     .remote_writes = context.target->remote_writes});
    context.requeueWithin(kDrainPoll);
    return;
  }
  const DrainReading& drained = reading->second;
  if (drained.invalid_condition) return;  // InvalidSpec: reported, nothing deleted
  if (drained.drained) {
    if (!survivorsTookOver(context, shard, drained)) return;
    const std::string how = drained.lag_seconds
                                ? "remote-write lag " +
                                      formatPrometheusDuration(std::chrono::seconds(
                                          static_cast<int64_t>(*drained.lag_seconds))) +
                                      " within " + formatPrometheusDuration(drain.max_lag)
                                : "condition held";
    // The DELETE follows in the next round, which reads the mark back: sent now, it would carry
    // the resourceVersion the mark replaces and fail with 409.
    writes.markDrained(shard, how);
    context.requeueWithin(kDrainedToDelete);
    return;
  }
  if (!shard.draining_since) {
    // The timeout starts at the first reading that finds it undrained; a failed one starts nothing.
    if (!drained.failed) writes.markDraining(shard, drained.reason);
  } else if (const auto gives_up_at = drain.givesUpAt(*shard.draining_since); now < gives_up_at) {
    context.requeueWithin(gives_up_at - now);
  } else {
    const std::string timed_out = "not drained " + formatPrometheusDuration(drain.timeout) +
                                  " after it was first found undrained";
    if (drain.on_timeout == OnTimeout::Keep) {
      decision.drain_timed_out.push_back(ActionBuilder::shardText(shard) + " " + timed_out + ": " +
                                         drained.reason + " (onTimeout: Keep keeps it)");
    } else if (!drained.failed) {
      // Only a reading that finds it still undrained deletes it: a failed one says nothing.
      if (!survivorsTookOver(context, shard, drained)) return;
      writes.remove(shard, shard.deadline,
                    timed_out + " (" + drained.reason + "); onTimeout: Delete deletes it anyway",
                    EventType::Warning, kReasonDrainTimedOut);
      return;
    }
  }
  decision.draining.push_back(ActionBuilder::shardText(shard) + ": " + drained.reason);
  context.requeueWithin(kDrainPoll);
}

// The target's attached shards below its count, whose reload a drain check reads.
void listSurvivors(PlanContext& context) {
  Decision& decision = context.plan.decision;
  if (decision.drain_checks.empty()) return;
  const int32_t replicas =
      static_cast<int32_t>(std::clamp<int64_t>(context.target->replicas.value_or(1), 0, INT32_MAX));
  for (const auto& attached : context.inventory->attached) {
    if (attached.index < context.target->effectiveShards() && !attached.object->being_deleted) {
      decision.drain_survivors.push_back(
          {.stateful_set = attached.object->name, .replicas = replicas});
    }
  }
}

}  // namespace

void planDueShards(PlanContext& context, ActionBuilder& writes,
                   std::span<const ShardStatefulSet* const> due) {
  const Decision& decision = context.plan.decision;
  const std::optional<DrainPolicy>& drain = decision.drain;
  for (const ShardStatefulSet* shard : due) {
    if (drain && drain->enabled) {
      planDrain(context, writes, *shard, *drain);
    } else {
      writes.remove(*shard, shard->deadline, deadlineText(*shard));
    }
  }
  listSurvivors(context);
}

}  // namespace shardscaler::planner
