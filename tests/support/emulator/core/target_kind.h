// What differs between the two kinds the emulated operator manages (Prometheus servers and
// PrometheusAgents): API names, the StatefulSet prefix, the mode label. Constants only, no I/O.
#pragma once

#include <string>

#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::emulator {

struct TargetKind {
  std::string kind;               // "Prometheus"
  std::string api_version;        // "monitoring.coreos.com/v1"
  k8s::Resource resource;         // prometheuses.monitoring.coreos.com/v1
  std::string mode;               // operator.prometheus.io/mode: "server" | "agent"
  std::string prefix;             // StatefulSet and Secret prefix: "prometheus" | "prom-agent"
  std::string app_name;           // app.kubernetes.io/name: "prometheus" | "prometheus-agent"
  std::string governing_service;  // "prometheus-operated" | "prometheus-agent-operated"
  bool server = true;
};

const TargetKind& prometheusKind();
const TargetKind& prometheusAgentKind();

// Label keys and values the operator writes (pkg/operator/kubernetes.go, pkg/prometheus/common.go).
inline constexpr const char* kManagedByLegacyLabel = "managed-by";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "prometheus-operator";
inline constexpr const char* kAppNameLabel = "app.kubernetes.io/name";
inline constexpr const char* kAppInstanceLabel = "app.kubernetes.io/instance";
inline constexpr const char* kAppVersionLabel = "app.kubernetes.io/version";
inline constexpr const char* kNameLabel = "operator.prometheus.io/name";
inline constexpr const char* kShardLabel = "operator.prometheus.io/shard";
inline constexpr const char* kModeLabel = "operator.prometheus.io/mode";
inline constexpr const char* kInputHashAnnotation = "prometheus-operator-input-hash";
inline constexpr const char* kControllerIdAnnotation = "operator.prometheus.io/controller-id";
inline constexpr const char* kOperatorPrefix = "operator.prometheus.io/";
inline constexpr const char* kKubectlPrefix = "kubectl.kubernetes.io/";

}  // namespace shardscaler::emulator
