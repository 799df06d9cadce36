// Names, labels and annotations that the Prometheus Operator and shardscaler put on StatefulSets
// (docs/design.md §2). Pure string functions: they never look anything up.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace shardscaler::planner {

// Labels or annotations of an object; looked up by string_view.
using StringMap = std::map<std::string, std::string, std::less<>>;

enum class TargetKind { Prometheus, PrometheusAgent };

// "Prometheus" / "PrometheusAgent"; anything else is not a target kind.
std::optional<TargetKind> parseTargetKind(std::string_view kind);
std::string_view toString(TargetKind kind);
// StatefulSet name prefix: "prometheus" or "prom-agent".
std::string_view statefulSetPrefix(TargetKind kind);
// Value of the operator.prometheus.io/mode label: "server" or "agent".
std::string_view operatorMode(TargetKind kind);

// Shard 0: <prefix>-<name>; shard i > 0: <prefix>-<name>-shard-<i>.
std::string statefulSetName(TargetKind kind, std::string_view target_name, int32_t index);

// A non-negative decimal shard index as the operator writes it ("0", "12"); nullopt for
// anything else ("", "-1", "01", "1e3", out of int32 range).
std::optional<int32_t> parseShardIndex(std::string_view text);

// operator.prometheus.io/name=<name>,statefulset.kubernetes.io/pod-name in (<sts>-0,...)
// with one pod (replica 0) per StatefulSet given, in the order given.
std::string activeShardPodSelector(std::string_view target_name,
                                   std::span<const std::string> stateful_set_names);

inline constexpr std::string_view kOperatorNameLabel = "operator.prometheus.io/name";
inline constexpr std::string_view kOperatorShardLabel = "operator.prometheus.io/shard";
inline constexpr std::string_view kOperatorModeLabel = "operator.prometheus.io/mode";
inline constexpr std::string_view kPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kRetainedLabel = "shardscaler.io/retained";
// On every StatefulSet of a target a ShardSet manages, active and retained: the admission guard's
// object selector. The operator keeps foreign labels when it updates a StatefulSet.
inline constexpr std::string_view kShardSetLabel = "shardscaler.io/shardset";
inline constexpr std::string_view kDetachedLabelsAnnotation = "shardscaler.io/detached-labels";
inline constexpr std::string_view kDeletionTimestampAnnotation =
    "operator.prometheus.io/deletion-timestamp";
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
// The field manager shardscaler sends with every write: the API server records it in
// managedFields and passes it to admission webhooks, where the shard guard recognises
// shardscaler's own re-attaches by it. The operator writes as "PrometheusOperator".
inline constexpr std::string_view kFieldManager = "shardscaler";
// How every denial of the shard guard begins ("shardscaler guard: rule ActiveShard: ..."); the
// API server passes it on inside its Forbidden, so the controller knows the guard refused it.
inline constexpr std::string_view kGuardDenialPrefix = "shardscaler guard: rule ";

}  // namespace shardscaler::planner
