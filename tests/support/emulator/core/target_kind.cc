#include "target_kind.h"

namespace shardscaler::emulator {

const TargetKind& prometheusKind() {
  static const TargetKind kind{
      .kind = "Prometheus",
      .api_version = "monitoring.coreos.com/v1",
      .resource = {.group = "monitoring.coreos.com", .version = "v1", .resource = "prometheuses"},
      .mode = "server",
      .prefix = "prometheus",
      .app_name = "prometheus",
      .governing_service = "prometheus-operated",
      .server = true,
  };
  return kind;
}

const TargetKind& prometheusAgentKind() {
  static const TargetKind kind{
      .kind = "PrometheusAgent",
      .api_version = "monitoring.coreos.com/v1alpha1",
      .resource = {.group = "monitoring.coreos.com",
                   .version = "v1alpha1",
                   .resource = "prometheusagents"},
      .mode = "agent",
      .prefix = "prom-agent",
      .app_name = "prometheus-agent",
      .governing_service = "prometheus-agent-operated",
      .server = false,
  };
  return kind;
}

}  // namespace shardscaler::emulator
