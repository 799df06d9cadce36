// The configuration Secret all shards of a target share: the generated Prometheus configuration
// (global section and scrape configs with the operator's hashmod sharding relabelling), gzipped
// as the operator stores it. Pure functions; loading referenced Secrets is the caller's job.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scrape_jobs.h"
#include "shardscaler/k8s_client/error.h"
#include "target_kind.h"

namespace shardscaler::emulator {

using Json = nlohmann::json;

inline constexpr const char* kConfigSecretKey = "prometheus.yaml.gz";

// unmanagedPrometheusConfiguration: a server without any of serviceMonitorSelector,
// podMonitorSelector, probeSelector, scrapeConfigSelector gets an empty Secret, created once.
bool unmanagedConfiguration(const TargetKind& kind, const Json& target);

// spec.additionalScrapeConfigs as {name, key, optional}; nullopt when unset.
struct SecretKeyRef {
  std::string name;
  std::string key;
  bool optional = false;
};
std::optional<SecretKeyRef> additionalScrapeConfigsRef(const Json& target);

// GenerateServerConfiguration / GenerateAgentConfiguration, restricted to what the emulator
// supports: the global section, the jobs of the selected Probes and ScrapeConfigs with the
// target's scrape classes (scrape_jobs.h), then the additional scrape configs (each gets the
// sharding relabelling unless it has a hashmod rule already, and none when there is one shard).
// Errors (ErrorKind::Invalid) for additional scrape configs that are not a YAML list of maps, and
// for two default scrape classes (the operator's sync fails on both).
k8s::Result<std::string> generateConfiguration(const TargetKind& kind, const Json& target,
                                               const std::string& additional_scrape_configs,
                                               const ScrapeObjects& objects = {});

// gzip (RFC 1952, mtime 0, as Go's gzip.Writer) and its inverse.
std::string gzipCompress(const std::string& data);
k8s::Result<std::string> gzipDecompress(const std::string& data);

// MakeConfigurationSecret: name <prefix>-<name>, managed-by labels, controller owner reference,
// data prometheus.yaml.gz = gzip(config).
Json makeConfigSecret(const TargetKind& kind, const Json& target, const std::string& config);

// BuildStatefulSetService: the headless governing Service shared by the namespace's targets.
Json makeGoverningService(const TargetKind& kind, const Json& target);

}  // namespace shardscaler::emulator
