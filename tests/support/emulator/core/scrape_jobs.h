// The scrape jobs the operator generates from the scrape objects a target selects, with the
// target's scrape classes and its sharding rules (pkg/prometheus/promcfg.go, v0.93:
// getScrapeClassConfig, generateProbeConfig, generateScrapeConfig, generateRelabelConfig,
// appendShardingRelabeling*), for the kinds the emulator supports: Probes with static targets and
// ScrapeConfigs with static and HTTP service-discovery targets. Pure; listing the objects is the
// caller's job.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::emulator {

using Json = nlohmann::json;

// The objects the target's selectors picked (its namespace and label selectors already applied).
struct ScrapeObjects {
  std::vector<Json> probes;
  std::vector<Json> scrape_configs;
};

// spec.scrapeClasses by name, and the default's name (getScrapeClassConfig). Invalid (the operator
// fails the sync) when two classes are the default.
struct ScrapeClasses {
  std::map<std::string, Json> by_name;
  std::string default_name;
  // The class an object gets: the one it names, else the default, else none.
  Json forObject(const Json& object) const;
};
k8s::Result<ScrapeClasses> scrapeClasses(const Json& target);

// The operator's RelabelConfig (camelCase) as it writes it into the configuration (snake_case,
// the action lower-cased, empty fields left out).
YAML::Node relabelConfig(const Json& rule);

// The sharding rules appendShardingRelabelingWithLabel adds (keyed on __address__, or a Probe's
// __param_target), modulus `shards`.
void appendShardingRules(YAML::Node& relabelings, int shards, const std::string& key_label);

// Whether a relabeling list already has a hashmod rule (the operator then adds no sharding rule).
bool hasHashmod(const YAML::Node& relabelings);

// The jobs of the selected Probes, then ScrapeConfigs, each sorted by namespace/name as the
// operator's maps are. An object naming a scrape class the target lacks is left out, as the
// operator's resource selector rejects it.
std::vector<YAML::Node> scrapeJobs(const ScrapeObjects& objects, const ScrapeClasses& classes,
                                   int shards);

}  // namespace shardscaler::emulator
