#include "shardscaler/resharding/scrape_objects.h"

#include <algorithm>
#include <cctype>

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

const Json& member(const Json& object, std::string_view key) {
  static const Json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string stringMember(const Json& object, std::string_view key) {
  const Json& value = member(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The selector fields of the Prometheus and PrometheusAgent specs.
struct SelectorFields {
  ScrapeKind kind;
  std::string_view selector;
  std::string_view namespace_selector;
};
constexpr std::array<SelectorFields, 4> kSelectorFields = {{
    {ScrapeKind::ServiceMonitor, "serviceMonitorSelector", "serviceMonitorNamespaceSelector"},
    {ScrapeKind::PodMonitor, "podMonitorSelector", "podMonitorNamespaceSelector"},
    {ScrapeKind::Probe, "probeSelector", "probeNamespaceSelector"},
    {ScrapeKind::ScrapeConfig, "scrapeConfigSelector", "scrapeConfigNamespaceSelector"},
}};

void readRelabelings(const Json& relabelings, ScrapeObject& out) {
  if (!relabelings.is_array()) return;
  for (const Json& rule : relabelings) {
    const std::string action = lower(stringMember(rule, "action"));
    const std::string target = stringMember(rule, "targetLabel");
    if (action == "hashmod") out.own_hashmod = true;
    // A hashmod, replace, lowercase or uppercase rule writes its target label (the default
    // action is replace); keep, drop and the label* actions write none.
    const bool writes = action.empty() || action == "replace" || action == "hashmod" ||
                        action == "lowercase" || action == "uppercase";
    if (!writes) continue;
    if (target == "__tmp_hash") out.sets_hash = true;
    if (target == "__tmp_disable_sharding") out.sets_disable_sharding = true;
  }
}

void readStaticTargets(const Json& targets, ScrapeObject& out) {
  if (!targets.is_array()) return;
  for (const Json& t : targets) {
    if (t.is_string()) out.static_keys.push_back(t.get<std::string>());
  }
}

}  // namespace

std::string_view toString(ScrapeKind kind) {
  switch (kind) {
    case ScrapeKind::ServiceMonitor:
      return "ServiceMonitor";
    case ScrapeKind::PodMonitor:
      return "PodMonitor";
    case ScrapeKind::Probe:
      return "Probe";
    case ScrapeKind::ScrapeConfig:
      return "ScrapeConfig";
  }
  return "Unknown";
}

k8s::Resource scrapeResource(ScrapeKind kind) {
  switch (kind) {
    case ScrapeKind::ServiceMonitor:
      return {"monitoring.coreos.com", "v1", "servicemonitors", true};
    case ScrapeKind::PodMonitor:
      return {"monitoring.coreos.com", "v1", "podmonitors", true};
    case ScrapeKind::Probe:
      return {"monitoring.coreos.com", "v1", "probes", true};
    case ScrapeKind::ScrapeConfig:
      return {"monitoring.coreos.com", "v1alpha1", "scrapeconfigs", true};
  }
  return {};
}

TargetScrapeSpec readTargetScrapeSpec(const Json& target) {
  const Json& spec = member(target, "spec");
  TargetScrapeSpec out;
  if (const Json& classes = member(spec, "scrapeClasses"); classes.is_array()) {
    out.scrape_classes = classes;
  }
  out.additional_scrape_configs = member(spec, "additionalScrapeConfigs").is_object();
  out.topology = stringMember(member(spec, "shardingStrategy"), "mode") == "Topology";
  for (const SelectorFields& f : kSelectorFields) {
    const Json& selector = member(spec, f.selector);
    const Json& namespaces = member(spec, f.namespace_selector);
    out.selections.push_back({.kind = f.kind,
                              .selector = selector.is_object() ? selector : Json(),
                              .namespace_selector = namespaces.is_object() ? namespaces : Json()});
  }
  return out;
}

ScrapeObject readScrapeObject(ScrapeKind kind, const Json& object) {
  const Json& metadata = member(object, "metadata");
  const Json& spec = member(object, "spec");
  ScrapeObject out{.kind = kind,
                   .ns = stringMember(metadata, "namespace"),
                   .name = stringMember(metadata, "name")};
  if (std::string c = stringMember(spec, "scrapeClass"); !c.empty()) out.scrape_class = c;
  switch (kind) {
    case ScrapeKind::ScrapeConfig: {
      readRelabelings(member(spec, "relabelings"), out);
      bool discovers = false;
      if (spec.is_object()) {
        for (const auto& [field, value] : spec.items()) {
          if (field.ends_with("SDConfigs") && value.is_array() && !value.empty()) discovers = true;
        }
      }
      const Json& statics = member(spec, "staticConfigs");
      if (statics.is_array()) {
        for (const Json& config : statics) {
          readStaticTargets(member(config, "targets"), out);
          if (member(member(config, "labels"), "job").is_string()) out.overrides_job = true;
        }
      }
      out.static_only = !discovers;
      break;
    }
    case ScrapeKind::Probe: {
      const Json& targets = member(spec, "targets");
      const Json& static_config = member(targets, "staticConfig");
      const Json& ingress = member(targets, "ingress");
      if (static_config.is_object()) {
        // The operator takes staticConfig and ignores ingress when both are set.
        readStaticTargets(member(static_config, "static"), out);
        readRelabelings(member(static_config, "relabelingConfigs"), out);
        if (member(member(static_config, "labels"), "job").is_string()) out.overrides_job = true;
        out.static_only = true;
      } else {
        readRelabelings(member(ingress, "relabelingConfigs"), out);
      }
      break;
    }
    case ScrapeKind::ServiceMonitor:
    case ScrapeKind::PodMonitor: {
      const Json& endpoints =
          member(spec, kind == ScrapeKind::ServiceMonitor ? "endpoints" : "podMetricsEndpoints");
      if (endpoints.is_array()) {
        for (const Json& endpoint : endpoints)
          readRelabelings(member(endpoint, "relabelings"), out);
      }
      break;
    }
  }
  return out;
}

std::string ScrapeObject::job() const {
  switch (kind) {
    case ScrapeKind::ScrapeConfig:
      return "scrapeConfig/" + ns + "/" + name;
    case ScrapeKind::Probe:
      return "probe/" + ns + "/" + name;
    case ScrapeKind::ServiceMonitor:
      return "serviceMonitor/" + ns + "/" + name;
    case ScrapeKind::PodMonitor:
      return "podMonitor/" + ns + "/" + name;
  }
  return "";
}

std::string ScrapeObject::describe() const {
  return std::string(toString(kind)) + " " + ns + "/" + name;
}

}  // namespace shardscaler::resharding
