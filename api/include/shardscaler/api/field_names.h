// The JSON names of the ShardSet API's fields (shardscaler.io/v1alpha1), the one place the
// codecs, the controller and the CRD check take them from. Names only: no parsing here.
#pragma once

#include <string_view>

#include "shardscaler/k8s_meta/condition.h"

namespace shardscaler::api::field {

inline constexpr std::string_view kMetadata = "metadata";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kNamespace = "namespace";
inline constexpr std::string_view kGeneration = "generation";
inline constexpr std::string_view kUid = "uid";
inline constexpr std::string_view kCreationTimestamp = "creationTimestamp";
inline constexpr std::string_view kSpec = "spec";
inline constexpr std::string_view kStatus = "status";

// spec
inline constexpr std::string_view kTargetRef = "targetRef";
inline constexpr std::string_view kKind = "kind";  // and kName, in targetRef
inline constexpr std::string_view kShards = "shards";
inline constexpr std::string_view kMinShards = "minShards";
inline constexpr std::string_view kMaxShards = "maxShards";
inline constexpr std::string_view kShardRetentionPolicy = "shardRetentionPolicy";
inline constexpr std::string_view kWhenScaled = "whenScaled";
inline constexpr std::string_view kRetain = "retain";
inline constexpr std::string_view kRetentionPeriod = "retentionPeriod";
inline constexpr std::string_view kDrain = "drain";
inline constexpr std::string_view kEnabled = "enabled";
inline constexpr std::string_view kCondition = "condition";
inline constexpr std::string_view kMaxLagSeconds = "maxLagSeconds";
inline constexpr std::string_view kTimeoutSeconds = "timeoutSeconds";
inline constexpr std::string_view kOnTimeout = "onTimeout";
inline constexpr std::string_view kIngestion = "ingestion";  // also in status
inline constexpr std::string_view kPrometheusURL = "prometheusURL";
inline constexpr std::string_view kQuery = "query";
inline constexpr std::string_view kInterval = "interval";
inline constexpr std::string_view kTargetSamplesPerShard = "targetSamplesPerShard";
inline constexpr std::string_view kResharding = "resharding";

// status (and kShards, kIngestion)
inline constexpr std::string_view kObservedGeneration = "observedGeneration";
inline constexpr std::string_view kSelector = "selector";
inline constexpr std::string_view kTargetShards = "targetShards";
inline constexpr std::string_view kRetainedCount = "retainedCount";
inline constexpr std::string_view kRecommendedShards = "recommendedShards";
inline constexpr std::string_view kRetainedShards = "retainedShards";
inline constexpr std::string_view kIndex = "index";
inline constexpr std::string_view kStatefulSet = "statefulSet";
inline constexpr std::string_view kDeletionTimestamp = "deletionTimestamp";
inline constexpr std::string_view kPhase = "phase";
inline constexpr std::string_view kLagSeconds = "lagSeconds";
inline constexpr std::string_view kDrainingSince = "drainingSince";
inline constexpr std::string_view kDrainedAt = "drainedAt";
inline constexpr std::string_view kDrainingCount = "drainingCount";
inline constexpr std::string_view kUnacknowledgedPauses = "unacknowledgedPauses";
inline constexpr std::string_view kTotalSamplesPerSecond = "totalSamplesPerSecond";
inline constexpr std::string_view kPerShard = "perShard";
inline constexpr std::string_view kSamplesPerSecond = "samplesPerSecond";
inline constexpr std::string_view kLastUpdate = "lastUpdate";
inline constexpr std::string_view kError = "error";
inline constexpr std::string_view kConditions = "conditions";

// status.conditions[] (metav1.Condition's own names; and kObservedGeneration)
inline constexpr std::string_view kType = k8s::condition_field::kType;
inline constexpr std::string_view kConditionStatus = k8s::condition_field::kStatus;
inline constexpr std::string_view kReason = k8s::condition_field::kReason;
inline constexpr std::string_view kMessage = k8s::condition_field::kMessage;
inline constexpr std::string_view kLastTransitionTime = k8s::condition_field::kLastTransitionTime;

}  // namespace shardscaler::api::field
