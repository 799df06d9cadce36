#include "shardscaler/ingestion/shard_pods.h"

#include <algorithm>
#include <charconv>

#include "shardscaler/k8s_client/label_selector.h"
#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::ingestion {
namespace {

using Json = nlohmann::json;

using k8s::meta::member;
using k8s::meta::stringOf;

// The ordinal of `pod` when it is named <stateful_set>-<n>.
std::optional<int32_t> ordinalOf(std::string_view pod, std::string_view stateful_set) {
  if (pod.size() <= stateful_set.size() + 1 || !pod.starts_with(stateful_set) ||
      pod[stateful_set.size()] != '-') {
    return std::nullopt;
  }
  const std::string_view digits = pod.substr(stateful_set.size() + 1);
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  int32_t ordinal = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
  if (ec != std::errc() || end != digits.data() + digits.size() || ordinal < 0) {
    return std::nullopt;
  }
  return ordinal;
}

bool controlledBy(const Json& pod, std::string_view uid) {
  const Json& refs = member(member(pod, "metadata"), "ownerReferences");
  if (!refs.is_array()) return false;
  return std::ranges::any_of(refs, [&](const Json& ref) {
    return member(ref, "controller") == true && stringOf(member(ref, "kind")) == "StatefulSet" &&
           stringOf(member(ref, "apiVersion")) == "apps/v1" && stringOf(member(ref, "uid")) == uid;
  });
}

std::optional<uint16_t> webPort(const Json& pod) {
  const Json& containers = member(member(pod, "spec"), "containers");
  if (!containers.is_array()) return std::nullopt;
  for (const Json& container : containers) {
    const Json& ports = member(container, "ports");
    if (!ports.is_array()) continue;
    for (const Json& port : ports) {
      const Json& number = member(port, "containerPort");
      const std::string protocol = stringOf(member(port, "protocol"));
      if (stringOf(member(port, "name")) == kWebPortName && number.is_number_integer() &&
          number.get<int64_t>() > 0 && number.get<int64_t>() < 65536 &&
          (protocol.empty() || protocol == "TCP")) {
        return static_cast<uint16_t>(number.get<int64_t>());
      }
    }
  }
  return std::nullopt;
}

PodRun runOf(const Json& pod) {
  const Json& status = member(pod, "status");
  const std::string phase = stringOf(member(status, "phase"));
  if (phase == "Running") return PodRun::Running;
  if (phase == "Succeeded" || phase == "Failed") return PodRun::Ended;
  if (phase != "Pending") return PodRun::Unknown;
  // Pending is "not started" only while no container of the pod ever ran.
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const Json& statuses = member(status, list);
    if (!statuses.is_array()) continue;
    for (const Json& s : statuses) {
      const Json& restarts = member(s, "restartCount");
      if ((restarts.is_number_integer() && restarts.get<int64_t>() > 0) ||
          !member(member(s, "state"), "running").is_null() ||
          !member(member(s, "state"), "terminated").is_null() ||
          !member(member(s, "lastState"), "terminated").is_null()) {
        return PodRun::Unknown;
      }
    }
  }
  return PodRun::NotStarted;
}

}  // namespace

std::string_view toString(PodRun run) {
  switch (run) {
    case PodRun::Running:
      return "Running";
    case PodRun::NotStarted:
      return "NotStarted";
    case PodRun::Ended:
      return "Ended";
    case PodRun::Unknown:
      return "Unknown";
  }
  return "Unknown";
}

ShardPods shardPods(const Json& stateful_set, std::span<const Json> pods) {
  ShardPods out;
  const Json& meta = member(stateful_set, "metadata");
  const Json& spec = member(stateful_set, "spec");
  out.stateful_set = stringOf(member(meta, "name"));
  out.uid = stringOf(member(meta, "uid"));
  const Json& replicas = member(spec, "replicas");
  out.replicas = replicas.is_number_integer() ? replicas.get<int32_t>() : 1;
  const Json& templates = member(spec, "volumeClaimTemplates");
  out.keeps_volumes = templates.is_array() && !templates.empty();
  auto selector = k8s::LabelSelector::fromObject(member(spec, "selector"));
  if (out.stateful_set.empty() || out.uid.empty()) {
    out.problem = "the StatefulSet has no name or uid";
    return out;
  }
  if (!selector || selector->empty()) {
    // An empty selector would match every pod; the API server never stores one for apps/v1.
    out.problem = "StatefulSet " + out.stateful_set + " has no usable spec.selector";
    return out;
  }
  for (const Json& pod : pods) {
    const Json& pod_meta = member(pod, "metadata");
    const std::string name = stringOf(member(pod_meta, "name"));
    const auto ordinal = ordinalOf(name, out.stateful_set);
    if (!ordinal) continue;
    if (!controlledBy(pod, out.uid)) {
      out.foreign.push_back(name + " (not controlled by StatefulSet " + out.stateful_set + ")");
      continue;
    }
    if (!selector->matches(k8s::labelsOf(member(pod_meta, "labels")))) {
      out.foreign.push_back(name + " (labels outside the StatefulSet's selector)");
      continue;
    }
    out.pods.push_back({.name = name,
                        .uid = stringOf(member(pod_meta, "uid")),
                        .ordinal = *ordinal,
                        .ip = stringOf(member(member(pod, "status"), "podIP")),
                        .web_port = webPort(pod),
                        .run = runOf(pod),
                        .terminating = !member(pod_meta, "deletionTimestamp").is_null()});
  }
  std::ranges::sort(out.pods, {}, &ShardPod::ordinal);
  return out;
}

}  // namespace shardscaler::ingestion
