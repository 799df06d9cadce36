// The PromQL the ingestion monitor sends (docs/design/ingestion.md): the default query of each
// target kind, the placeholders of an override, and the pod names of a target. Pure string
// functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/planner/naming.h"

namespace shardscaler::ingestion {

// Placeholders of spec.ingestion.query (and of the default queries). Each is replaced by text
// escaped for the inside of a double-quoted PromQL string, e.g.
//   sum by (pod) (rate(my_samples_total{namespace="$NAMESPACE",pod=~"$POD_REGEX"}[1m]))
inline constexpr std::string_view kNamespacePlaceholder = "$NAMESPACE";  // the ShardSet's
inline constexpr std::string_view kPodRegexPlaceholder = "$POD_REGEX";   // the target's pods

// prometheus_tsdb_head_samples_appended_total or prometheus_agent_samples_appended_total.
std::string_view samplesAppendedMetric(planner::TargetKind kind);

// sum by (pod) (rate(<metric>{namespace="$NAMESPACE",pod=~"$POD_REGEX"}[5m]))
std::string defaultQueryTemplate(planner::TargetKind kind);

// `text` with every RE2 meta character backslash-escaped, so it matches itself.
std::string escapeRegex(std::string_view text);
// `text` escaped for the inside of a double-quoted PromQL string (backslash, '"', newline).
std::string escapePromqlString(std::string_view text);

// A regex (anchored by Prometheus) matching the pods of every shard of the target, replicas
// included: <prefix>-<name>(-shard-<i>)?-<replica>. Not escaped for PromQL.
std::string targetPodRegex(planner::TargetKind kind, std::string_view target_name);

// The query to send for `target`: its override, else the default of its kind, with the
// placeholders replaced.
std::string ingestionQuery(const IngestionTarget& target);

// The shard of a pod "<statefulset>-<replica>" of the target, by the operator's StatefulSet
// naming; nullopt when the pod is not one of the target's.
std::optional<int32_t> shardOfPod(planner::TargetKind kind, std::string_view target_name,
                                  std::string_view pod);

}  // namespace shardscaler::ingestion
