// Names, labels and annotations that the Prometheus Operator and shardscaler put on StatefulSets
// (docs/design.md). Pure string functions: they never look anything up.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "shardscaler/api/well_known.h"
#include "shardscaler/k8s_meta/resource.h"

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
// The REST resource of the kind: monitoring.coreos.com/v1 prometheuses or v1alpha1
// prometheusagents.
k8s::Resource targetResource(TargetKind kind);

// Shard 0: <prefix>-<name>; shard i > 0: <prefix>-<name>-shard-<i>.
std::string statefulSetName(TargetKind kind, std::string_view target_name, int32_t index);

// A non-negative decimal shard index as the operator writes it ("0", "12"); nullopt for
// anything else ("", "-1", "01", "1e3", out of int32 range).
std::optional<int32_t> parseShardIndex(std::string_view text);

// operator.prometheus.io/name=<name>,statefulset.kubernetes.io/pod-name in (<sts>-0,...)
// with one pod (replica 0) per StatefulSet given, in the order given.
std::string activeShardPodSelector(std::string_view target_name,
                                   std::span<const std::string> stateful_set_names);

}  // namespace shardscaler::planner
