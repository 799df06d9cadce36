// What low-churn re-sharding reads of a target and of the scrape objects it selects: the target's
// scrape classes, selectors and the spec fields that decide whether a scrape class reaches its
// targets; per object, its scrape class, the relabelings that shard it on their own, and its
// static targets. Pure readers: a field of the wrong type reads as absent.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_meta/resource.h"

namespace shardscaler::resharding {

// The kinds whose jobs get a target's scrape class (pkg/prometheus/promcfg.go).
enum class ScrapeKind { ServiceMonitor, PodMonitor, Probe, ScrapeConfig };
inline constexpr std::array<ScrapeKind, 4> kScrapeKinds = {
    ScrapeKind::ServiceMonitor, ScrapeKind::PodMonitor, ScrapeKind::Probe,
    ScrapeKind::ScrapeConfig};
std::string_view toString(ScrapeKind kind);
// monitoring.coreos.com/v1 servicemonitors, podmonitors, probes; v1alpha1 scrapeconfigs.
k8s::Resource scrapeResource(ScrapeKind kind);

// Which objects of a kind the target selects (`<kind>Selector`, `<kind>NamespaceSelector`, as
// metav1.LabelSelectors: null selects no object, resp. only the target's namespace; {} all).
struct ScrapeSelection {
  ScrapeKind kind = ScrapeKind::ServiceMonitor;
  nlohmann::json selector;            // null: the kind is not selected
  nlohmann::json namespace_selector;  // null: the target's namespace only
};

struct TargetScrapeSpec {
  nlohmann::json scrape_classes;           // spec.scrapeClasses as written (null when absent)
  bool additional_scrape_configs = false;  // spec.additionalScrapeConfigs is set
  bool topology = false;                   // spec.shardingStrategy.mode is Topology
  std::vector<ScrapeSelection> selections;

  friend bool operator==(const TargetScrapeSpec&, const TargetScrapeSpec&) = default;
};
TargetScrapeSpec readTargetScrapeSpec(const nlohmann::json& target);

struct ScrapeObject {
  ScrapeKind kind = ScrapeKind::ScrapeConfig;
  std::string ns;
  std::string name;
  std::optional<std::string> scrape_class;  // spec.scrapeClass ("" reads as unset)
  // Its own relabelings: a hashmod (the operator then adds no sharding rules to a ScrapeConfig),
  // a rule writing __tmp_hash or __tmp_disable_sharding.
  bool own_hashmod = false;
  bool sets_hash = false;
  bool sets_disable_sharding = false;
  // A static config's labels set `job`: its targets' job is not the generated job name.
  bool overrides_job = false;
  // Static targets (a ScrapeConfig's staticConfigs, a Probe's targets.staticConfig.static), and
  // whether they are all its targets (no discovery besides).
  std::vector<std::string> static_keys;
  bool static_only = false;

  // The job the operator generates for it: "scrapeConfig/<ns>/<name>", "probe/<ns>/<name>";
  // ServiceMonitors and PodMonitors have one per endpoint, "<kind>/<ns>/<name>/<i>".
  std::string job() const;
  std::string describe() const;  // "ScrapeConfig monitoring/static"
};
ScrapeObject readScrapeObject(ScrapeKind kind, const nlohmann::json& object);

}  // namespace shardscaler::resharding
