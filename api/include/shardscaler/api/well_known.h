// The labels, annotations, finalizer and field manager that shardscaler and the Prometheus
// Operator put on objects, each defined once (as kubernetes/api's well_known_labels.go).
// Names only: nothing here reads or writes an object.
#pragma once

#include <string_view>

namespace shardscaler::api {

// ---- the Prometheus Operator's (docs/design.md) ----
inline constexpr std::string_view kOperatorNameLabel = "operator.prometheus.io/name";
inline constexpr std::string_view kOperatorShardLabel = "operator.prometheus.io/shard";
inline constexpr std::string_view kOperatorModeLabel = "operator.prometheus.io/mode";
inline constexpr std::string_view kPodNameLabel = "statefulset.kubernetes.io/pod-name";
// A retained shard's deletion deadline (RFC 3339 UTC; 0001-01-01T00:00:00Z = never), under the
// name the operator's shard autoscaling proposal gave it. Still written (and read when the others
// are missing), for retained shards and tools of older shardscalers.
inline constexpr std::string_view kDeletionTimestampAnnotation =
    "operator.prometheus.io/deletion-timestamp";
// The deadline of the operator's own shard retention (v0.91+, on by default from v0.92): it
// deletes an excess shard once this passed. shardscaler writes it too, so that an operator taking
// a shard back honours the deadline, and never deletes a shard while it is ahead.
inline constexpr std::string_view kOperatorDeletionDeadlineAnnotation =
    "operator.prometheus.io/deletion-deadline";

// ---- shardscaler's ----
// Every key of shardscaler's own labels and annotations starts with this.
inline constexpr std::string_view kShardscalerPrefix = "shardscaler.io/";
inline constexpr std::string_view kRetainedLabel = "shardscaler.io/retained";
// shardscaler's own copy of a retained shard's deadline, the one it acts on: an operator update
// strips unknown keys of the operator.prometheus.io/ prefix, never these.
inline constexpr std::string_view kDeletionDeadlineAnnotation = "shardscaler.io/deletion-deadline";
// On every StatefulSet of a target a ShardSet manages, active and retained: the admission guard's
// object selector. The operator keeps foreign labels when it updates a StatefulSet.
inline constexpr std::string_view kShardSetLabel = "shardscaler.io/shardset";
inline constexpr std::string_view kDetachedLabelsAnnotation = "shardscaler.io/detached-labels";
inline constexpr std::string_view kPausedByAnnotation = "shardscaler.io/paused-by";
// When shardscaler paused the target (RFC3339 UTC, milliseconds): the fallback's settle time and
// the pause-acknowledgement timeout count from it.
inline constexpr std::string_view kPausedAtAnnotation = "shardscaler.io/paused-at";
// When shardscaler last lowered the target's spec.shards (RFC3339 UTC, milliseconds): under
// whenScaled=Delete the shards above the count are deleted only once the settle time has passed
// since, so that an operator sync that started from the higher count cannot create them again.
inline constexpr std::string_view kScaledDownAtAnnotation = "shardscaler.io/scaled-down-at";
// When a shard was detached (RFC3339 UTC, milliseconds): the fallback's settle time counts from it.
inline constexpr std::string_view kDetachedAtAnnotation = "shardscaler.io/detached-at";
// On the target: the one ShardSet (same namespace) that manages it. A second ShardSet on the same
// target is refused and touches nothing.
inline constexpr std::string_view kClaimedByAnnotation = "shardscaler.io/claimed-by";
// On a retained shard that became due while its data was not shipped yet: when a check of
// shardscaler's first found it so (RFC 3339 UTC, milliseconds; a check that failed finds
// nothing). Written once, with the ShardDraining Event; the drain's timeout counts from it. A
// detach removes it, as it removes drained-at: each detached life drains afresh.
inline constexpr std::string_view kDrainingSinceAnnotation = "shardscaler.io/draining-since";
// On a retained shard whose drain condition held: when (RFC 3339 UTC, milliseconds). Written
// right before its deletion; the shard guard admits the deletion of a due shard only with it
// (or once the drain's timeout passed under onTimeout: Delete).
inline constexpr std::string_view kDrainedAtAnnotation = "shardscaler.io/drained-at";
// Held on every ShardSet so that its deletion cannot leave a target paused by shardscaler.
inline constexpr std::string_view kReleaseFinalizer = "shardscaler.io/release-target";
// On a claimed Prometheus whose spec.shardRetentionPolicy shardscaler set to retain (so that the
// operator keeps the shards a foreign lowering of spec.shards removes): the target's own policy
// before that, as JSON ("null": none), restored when the claim is released.
inline constexpr std::string_view kSavedShardRetentionPolicyAnnotation =
    "shardscaler.io/saved-shard-retention-policy";
// On the ShardSet: the target it is bound to ("Prometheus/main"), so that a changed or invalid
// spec.targetRef still lets it release the target it managed. First written with the finalizer,
// before the claim: a release of a target the ShardSet never claimed writes nothing.
inline constexpr std::string_view kBoundTargetAnnotation = "shardscaler.io/target";
// On the guard's certificate Secret: when its signing CA was published, and until when older CAs
// must stay in the bundle.
inline constexpr std::string_view kCaPublishedAtAnnotation = "shardscaler.io/ca-published-at";
inline constexpr std::string_view kOldCasNeededUntilAnnotation =
    "shardscaler.io/old-cas-needed-until";
// The field manager shardscaler sends with every write: the API server records it in
// managedFields and passes it to admission webhooks, where the shard guard recognises
// shardscaler's own re-attaches by it. The operator writes as "PrometheusOperator".
inline constexpr std::string_view kFieldManager = "shardscaler";
// The operator's field manager (pkg/k8s PrometheusOperatorFieldManager).
inline constexpr std::string_view kOperatorFieldManager = "PrometheusOperator";
// How every denial of the shard guard begins ("shardscaler guard: rule ActiveShard: ..."); the
// API server passes it on inside its Forbidden, so the controller knows the guard refused it.
inline constexpr std::string_view kGuardDenialPrefix = "shardscaler guard: rule ";

}  // namespace shardscaler::api
