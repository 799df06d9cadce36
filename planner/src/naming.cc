#include "shardscaler/planner/naming.h"

#include <charconv>
#include <limits>

namespace shardscaler::planner {

std::optional<TargetKind> parseTargetKind(std::string_view kind) {
  if (kind == "Prometheus") return TargetKind::Prometheus;
  if (kind == "PrometheusAgent") return TargetKind::PrometheusAgent;
  return std::nullopt;
}

std::string_view toString(TargetKind kind) {
  return kind == TargetKind::Prometheus ? "Prometheus" : "PrometheusAgent";
}

std::string_view statefulSetPrefix(TargetKind kind) {
  return kind == TargetKind::Prometheus ? "prometheus" : "prom-agent";
}

std::string_view operatorMode(TargetKind kind) {
  return kind == TargetKind::Prometheus ? "server" : "agent";
}

k8s::Resource targetResource(TargetKind kind) {
  return kind == TargetKind::Prometheus
             ? k8s::Resource{"monitoring.coreos.com", "v1", "prometheuses", true}
             : k8s::Resource{"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
}

std::string statefulSetName(TargetKind kind, std::string_view target_name, int32_t index) {
  std::string name;
  name.reserve(target_name.size() + 24);
  name.append(statefulSetPrefix(kind)).append("-").append(target_name);
  if (index > 0) name.append("-shard-").append(std::to_string(index));
  return name;
}

std::optional<int32_t> parseShardIndex(std::string_view text) {
  // The operator writes fmt.Sprintf("%d"); a leading zero or sign is not its spelling, and a
  // lenient reading could map two StatefulSets onto one shard.
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      value > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(value);
}

std::string activeShardPodSelector(std::string_view target_name,
                                   std::span<const std::string> stateful_set_names) {
  std::string selector;
  selector.append(api::kOperatorNameLabel).append("=").append(target_name);
  selector.append(",").append(api::kPodNameLabel).append(" in (");
  bool first = true;
  for (const auto& sts : stateful_set_names) {
    if (!first) selector.append(",");
    first = false;
    selector.append(sts).append("-0");
  }
  selector.append(")");
  return selector;
}

}  // namespace shardscaler::planner
