// How the planner sets status conditions (metav1.Condition), and the Events a plan asks the
// controller to publish. Values only: publishing them is the controller's job.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "shardscaler/api/condition_types.h"

namespace shardscaler::planner {

// The planner writes the API's conditions (api/condition_types.h).
using api::Condition;
using api::kConditionDegraded;
using api::kConditionProgressing;
using api::kConditionReady;

// A condition as of `now` (status True, False or Unknown): lastTransitionTime is kept from the
// previous condition of the same type when its status did not change, as metav1.Condition
// requires (k8s::setStatusCondition).
Condition makeCondition(std::span<const Condition> previous, std::string_view type,
                        std::string_view status, std::string_view reason, std::string message,
                        int64_t observed_generation, std::chrono::system_clock::time_point now);
inline Condition makeCondition(std::span<const Condition> previous, std::string_view type,
                               bool status, std::string_view reason, std::string message,
                               int64_t observed_generation,
                               std::chrono::system_clock::time_point now) {
  return makeCondition(previous, type, status ? api::kConditionTrue : api::kConditionFalse, reason,
                       std::move(message), observed_generation, now);
}

enum class EventType { Normal, Warning };
std::string_view toString(EventType type);

// Event reasons (kubectl describe shardset).
inline constexpr std::string_view kReasonShardRetained = "ShardRetained";
inline constexpr std::string_view kReasonShardReattached = "ShardReattached";
inline constexpr std::string_view kReasonShardDeleted = "ShardDeleted";
inline constexpr std::string_view kReasonTargetScaled = "TargetScaled";
inline constexpr std::string_view kReasonScaleClamped = "ScaleClamped";
inline constexpr std::string_view kReasonRoundedToZoneMultiple = "RoundedToZoneMultiple";
inline constexpr std::string_view kReasonInvalidSpec = "InvalidSpec";
inline constexpr std::string_view kReasonTargetNotFound = "TargetNotFound";
inline constexpr std::string_view kReasonInvalidDeletionTimestamp = "InvalidDeletionTimestamp";
// Another ShardSet holds the target's claim.
inline constexpr std::string_view kReasonTargetClaimed = "TargetClaimed";
// Without the guard, the operator did not acknowledge a pause in time: the transition was undone.
inline constexpr std::string_view kReasonPauseNotAcknowledged = "PauseNotAcknowledged";
// The ShardSet was deleted while it kept retained shards; nothing deletes them any more.
inline constexpr std::string_view kReasonRetainedShardsOrphaned = "RetainedShardsOrphaned";
// A write the API server refused for good (Forbidden, Invalid).
inline constexpr std::string_view kReasonApplyFailed = "ApplyFailed";
// The drain (docs/design/drain.md): a due shard waits for its data to be shipped (ShardDraining),
// is found shipped (ShardDrained), or is still not shipped when the timeout passes
// (DrainTimedOut: an Event, and Degraded under onTimeout Keep).
inline constexpr std::string_view kReasonShardDraining = "ShardDraining";
inline constexpr std::string_view kReasonShardDrained = "ShardDrained";
inline constexpr std::string_view kReasonDrainTimedOut = "DrainTimedOut";
// DrainChecked condition reasons.
inline constexpr std::string_view kReasonDrainsChecked = "DrainsChecked";
inline constexpr std::string_view kReasonDrainDisabled = "DrainDisabled";
inline constexpr std::string_view kReasonDraining = "Draining";  // Progressing
// OtherWriters condition reasons (also the Warning Event's, when it turns True).
inline constexpr std::string_view kReasonFieldManagerConflict = "FieldManagerConflict";
inline constexpr std::string_view kReasonHPATargetsTarget = "HPATargetsTarget";
inline constexpr std::string_view kReasonNoOtherWriters = "NoOtherWriters";

// Condition reasons that are not also Event reasons (docs/design.md lists which condition
// carries which).
inline constexpr std::string_view kReasonShardsReady = "ShardsReady";            // Ready
inline constexpr std::string_view kReasonScaling = "Scaling";                    // Ready
inline constexpr std::string_view kReasonWaitingForShards = "WaitingForShards";  // Ready
inline constexpr std::string_view kReasonTargetDeleting = "TargetDeleting";  // Ready, Progressing
inline constexpr std::string_view kReasonReleasing = "Releasing";            // Ready, Progressing
inline constexpr std::string_view kReasonScalingDown = "ScalingDown";        // Progressing
inline constexpr std::string_view kReasonScalingUp = "ScalingUp";            // Progressing
inline constexpr std::string_view kReasonReconciling = "Reconciling";        // Progressing
inline constexpr std::string_view kReasonDeletingShards = "DeletingShards";  // Progressing
inline constexpr std::string_view kReasonWaitingForOperator = "WaitingForOperator";  // Progressing
inline constexpr std::string_view kReasonStable = "Stable";                          // Progressing
inline constexpr std::string_view kReasonRestoringTarget = "RestoringTarget";        // Progressing
inline constexpr std::string_view kReasonAsExpected = "AsExpected";                  // Degraded

// An Event about the ShardSet (its involvedObject).
struct Event {
  EventType type = EventType::Normal;
  std::string reason;
  std::string message;

  friend bool operator==(const Event&, const Event&) = default;
};

}  // namespace shardscaler::planner
