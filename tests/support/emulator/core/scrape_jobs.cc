#include "scrape_jobs.h"

#include <algorithm>
#include <cctype>

namespace shardscaler::emulator {
namespace {

const Json& member(const Json& object, const char* key) {
  static const Json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string stringMember(const Json& object, const char* key) {
  const Json& v = member(object, key);
  return v.is_string() ? v.get<std::string>() : "";
}

std::string objectKey(const Json& object) {
  const Json& metadata = member(object, "metadata");
  return stringMember(metadata, "namespace") + "/" + stringMember(metadata, "name");
}

std::vector<const Json*> sorted(const std::vector<Json>& objects) {
  std::vector<const Json*> out;
  out.reserve(objects.size());
  for (const Json& o : objects) out.push_back(&o);
  std::ranges::sort(out, {}, [](const Json* o) { return objectKey(*o); });
  return out;
}

// initRelabelings: the job name into a meta label.
YAML::Node initRelabelings() {
  YAML::Node rules(YAML::NodeType::Sequence);
  YAML::Node rule;
  rule["source_labels"].push_back("job");
  rule["target_label"] = "__tmp_prometheus_job_name";
  rules.push_back(rule);
  return rules;
}

void appendRelabelings(YAML::Node& into, const Json& rules) {
  if (!rules.is_array()) return;
  for (const Json& rule : rules) into.push_back(relabelConfig(rule));
}

YAML::Node stringMap(const Json& map) {
  YAML::Node out(YAML::NodeType::Map);
  if (!map.is_object()) return out;
  for (const auto& [k, v] : map.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

YAML::Node stringList(const Json& list) {
  YAML::Node out(YAML::NodeType::Sequence);
  if (!list.is_array()) return out;
  for (const Json& v : list) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

YAML::Node probeJob(const Json& probe, const ScrapeClasses& classes, int shards) {
  const Json& metadata = member(probe, "metadata");
  const Json& spec = member(probe, "spec");
  const std::string ns = stringMember(metadata, "namespace");
  YAML::Node job;
  job["job_name"] = "probe/" + ns + "/" + stringMember(metadata, "name");
  job["honor_timestamps"] = true;
  const Json& prober = member(spec, "prober");
  const std::string path = stringMember(prober, "path");
  job["metrics_path"] = path.empty() ? "/probe" : path;
  if (std::string interval = stringMember(spec, "interval"); !interval.empty()) {
    job["scrape_interval"] = interval;
  }
  if (std::string module = stringMember(spec, "module"); !module.empty()) {
    job["params"]["module"].push_back(module);
  }
  const Json& static_config = member(member(spec, "targets"), "staticConfig");
  YAML::Node labels = stringMap(member(static_config, "labels"));
  if (!labels["namespace"]) labels["namespace"] = ns;
  YAML::Node config;
  config["targets"] = stringList(member(static_config, "static"));
  config["labels"] = labels;
  job["static_configs"].push_back(config);

  YAML::Node relabelings = initRelabelings();
  if (std::string name = stringMember(spec, "jobName"); !name.empty()) {
    YAML::Node rule;
    rule["target_label"] = "job";
    rule["replacement"] = name;
    relabelings.push_back(rule);
  }
  YAML::Node to_param;
  to_param["source_labels"].push_back("__address__");
  to_param["target_label"] = "__param_target";
  relabelings.push_back(to_param);
  YAML::Node to_instance;
  to_instance["source_labels"].push_back("__param_target");
  to_instance["target_label"] = "instance";
  relabelings.push_back(to_instance);
  YAML::Node to_prober;
  to_prober["target_label"] = "__address__";
  to_prober["replacement"] = stringMember(prober, "url");
  relabelings.push_back(to_prober);
  appendRelabelings(relabelings, member(classes.forObject(probe), "relabelings"));
  appendRelabelings(relabelings, member(static_config, "relabelingConfigs"));
  appendShardingRules(relabelings, shards, "__param_target");
  job["relabel_configs"] = relabelings;
  return job;
}

YAML::Node scrapeConfigJob(const Json& sc, const ScrapeClasses& classes, int shards) {
  const Json& metadata = member(sc, "metadata");
  const Json& spec = member(sc, "spec");
  YAML::Node job;
  job["job_name"] =
      "scrapeConfig/" + stringMember(metadata, "namespace") + "/" + stringMember(metadata, "name");
  if (std::string path = stringMember(spec, "metricsPath"); !path.empty()) {
    job["metrics_path"] = path;
  }
  if (std::string interval = stringMember(spec, "scrapeInterval"); !interval.empty()) {
    job["scrape_interval"] = interval;
  }
  if (const Json& statics = member(spec, "staticConfigs"); statics.is_array()) {
    for (const Json& s : statics) {
      YAML::Node config;
      config["targets"] = stringList(member(s, "targets"));
      config["labels"] = stringMap(member(s, "labels"));
      job["static_configs"].push_back(config);
    }
  }
  if (const Json& http = member(spec, "httpSDConfigs"); http.is_array()) {
    for (const Json& h : http) {
      YAML::Node config;
      config["url"] = stringMember(h, "url");
      if (std::string refresh = stringMember(h, "refreshInterval"); !refresh.empty()) {
        config["refresh_interval"] = refresh;
      }
      job["http_sd_configs"].push_back(config);
    }
  }
  YAML::Node relabelings = initRelabelings();
  appendRelabelings(relabelings, member(classes.forObject(sc), "relabelings"));
  if (std::string name = stringMember(spec, "jobName"); !name.empty()) {
    YAML::Node rule;
    rule["target_label"] = "job";
    rule["action"] = "replace";
    rule["replacement"] = name;
    relabelings.push_back(rule);
  }
  appendRelabelings(relabelings, member(spec, "relabelings"));
  // appendShardingRelabelingWithAddressIfMissing: nothing after any hashmod, scrape class's too.
  if (shards != 1 && !hasHashmod(relabelings))
    appendShardingRules(relabelings, shards, "__address__");
  job["relabel_configs"] = relabelings;
  return job;
}

// validateScrapeClass: an object naming a class the target does not have is rejected.
bool acceptedClass(const Json& object, const ScrapeClasses& classes) {
  const std::string name = stringMember(member(object, "spec"), "scrapeClass");
  return name.empty() || classes.by_name.contains(name);
}

}  // namespace

bool hasHashmod(const YAML::Node& relabelings) {
  for (const auto& rule : relabelings) {
    if (rule.IsMap() && rule["action"] && rule["action"].IsScalar() &&
        rule["action"].as<std::string>() == "hashmod") {
      return true;
    }
  }
  return false;
}

Json ScrapeClasses::forObject(const Json& object) const {
  const std::string name = stringMember(member(object, "spec"), "scrapeClass");
  if (!name.empty()) {
    if (auto it = by_name.find(name); it != by_name.end()) return it->second;
  }
  if (!default_name.empty()) return by_name.at(default_name);
  return Json::object();
}

k8s::Result<ScrapeClasses> scrapeClasses(const Json& target) {
  ScrapeClasses out;
  const Json& classes = member(member(target, "spec"), "scrapeClasses");
  if (!classes.is_array()) return out;
  for (const Json& c : classes) {
    const std::string name = stringMember(c, "name");
    if (member(c, "default") == true) {
      if (!out.default_name.empty()) {
        return k8s::makeError(k8s::ErrorKind::Invalid,
                              "failed to parse scrape classes: multiple default scrape classes "
                              "defined: \"" +
                                  out.default_name + "\" and \"" + name + "\"");
      }
      out.default_name = name;
    }
    out.by_name[name] = c;
  }
  return out;
}

YAML::Node relabelConfig(const Json& rule) {
  YAML::Node out(YAML::NodeType::Map);
  if (const Json& sources = member(rule, "sourceLabels"); sources.is_array() && !sources.empty()) {
    out["source_labels"] = stringList(sources);
  }
  if (const Json& separator = member(rule, "separator"); separator.is_string()) {
    out["separator"] = separator.get<std::string>();
  }
  if (std::string target = stringMember(rule, "targetLabel"); !target.empty()) {
    out["target_label"] = target;
  }
  if (std::string regex = stringMember(rule, "regex"); !regex.empty()) out["regex"] = regex;
  if (const Json& modulus = member(rule, "modulus");
      modulus.is_number_integer() && modulus.get<int64_t>() != 0) {
    out["modulus"] = modulus.get<int64_t>();
  }
  if (const Json& replacement = member(rule, "replacement"); replacement.is_string()) {
    out["replacement"] = replacement.get<std::string>();
  }
  if (std::string action = stringMember(rule, "action"); !action.empty()) {
    std::ranges::transform(action, action.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out["action"] = action;
  }
  return out;
}

void appendShardingRules(YAML::Node& relabelings, int shards, const std::string& key_label) {
  YAML::Node unless_set;
  unless_set["source_labels"].push_back(key_label);
  unless_set["source_labels"].push_back("__tmp_hash");
  unless_set["target_label"] = "__tmp_hash";
  unless_set["regex"] = "(.+);";
  unless_set["replacement"] = "$1";
  unless_set["action"] = "replace";
  relabelings.push_back(unless_set);
  YAML::Node hash;
  hash["source_labels"].push_back("__tmp_hash");
  hash["target_label"] = "__tmp_hash";
  hash["modulus"] = shards;
  hash["action"] = "hashmod";
  relabelings.push_back(hash);
  YAML::Node keep;
  keep["source_labels"].push_back("__tmp_hash");
  keep["source_labels"].push_back("__tmp_disable_sharding");
  keep["regex"] = "$(SHARD);|.+;.+";
  keep["action"] = "keep";
  relabelings.push_back(keep);
}

std::vector<YAML::Node> scrapeJobs(const ScrapeObjects& objects, const ScrapeClasses& classes,
                                   int shards) {
  std::vector<YAML::Node> jobs;
  for (const Json* probe : sorted(objects.probes)) {
    // Only static targets: an ingress Probe needs Kubernetes service discovery.
    if (!acceptedClass(*probe, classes) ||
        !member(member(member(*probe, "spec"), "targets"), "staticConfig").is_object()) {
      continue;
    }
    jobs.push_back(probeJob(*probe, classes, shards));
  }
  for (const Json* sc : sorted(objects.scrape_configs)) {
    if (!acceptedClass(*sc, classes)) continue;
    jobs.push_back(scrapeConfigJob(*sc, classes, shards));
  }
  return jobs;
}

}  // namespace shardscaler::emulator
