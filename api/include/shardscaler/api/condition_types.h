// A ShardSet's status condition: a metav1.Condition (k8s-client/meta), and the condition types
// shardscaler writes. Values only: deciding a condition is the planner's and the status writer's
// job.
#pragma once

#include <string_view>

#include "shardscaler/k8s_meta/condition.h"

namespace shardscaler::api {

// The condition types of ShardSet.status.conditions.
inline constexpr std::string_view kConditionReady = "Ready";
inline constexpr std::string_view kConditionProgressing = "Progressing";
inline constexpr std::string_view kConditionDegraded = "Degraded";
// True: the last ingestion query returned rates. Absent without spec.ingestion.
inline constexpr std::string_view kConditionIngestionAvailable = "IngestionAvailable";
// Whether a retained shard's deletion waits for its data to be shipped (docs/design/drain.md):
// True when drains are checked, False when they are off or cannot be checked (no endpoint).
inline constexpr std::string_view kConditionDrainChecked = "DrainChecked";
// True when something besides shardscaler writes the claimed target's spec.shards or
// spec.paused: another field manager, or an HPA aimed at the target itself
// (docs/design/operator.md).
inline constexpr std::string_view kConditionOtherWriters = "OtherWriters";
// Whether shardscaler's low-churn rules assign the target's scrape targets to shards
// (spec.resharding LowChurn), which objects they cover and why the others are not; absent while
// spec.resharding was never LowChurn.
inline constexpr std::string_view kConditionResharding = "Resharding";

// status.conditions[] is a list of metav1.Condition, with its codec.
using k8s::Condition;
using k8s::conditionFromJson;
using k8s::kConditionFalse;
using k8s::kConditionStatuses;
using k8s::kConditionTrue;
using k8s::kConditionUnknown;
using k8s::toJson;

}  // namespace shardscaler::api
