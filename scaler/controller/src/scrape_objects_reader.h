// The scrape objects a target selects (its ServiceMonitors, PodMonitors, Probes and ScrapeConfigs,
// by the target's selectors and namespace selectors, as the operator's resource selector picks
// them), read live for low-churn re-sharding. It never writes.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/planner/target.h"
#include "shardscaler/resharding/scrape_objects.h"

namespace shardscaler::controller {

// Thread-safety: any thread.
class ScrapeObjectsReader {
 public:
  ScrapeObjectsReader(k8s::KubeClient& client, const k8s::Clock& clock)
      : client_(client), clock_(clock) {}

  // What `target` selects, read for the ShardSet `key`; nullopt, with *error saying which list
  // failed, when one did. A kind whose CRD is not installed selects nothing.
  std::optional<std::vector<resharding::ScrapeObject>> read(const std::string& key,
                                                            const planner::Target& target,
                                                            std::string* error);
  // The last read for `key` succeeded within `max_age`.
  bool readWithin(const std::string& key, std::chrono::nanoseconds max_age) const;
  void forget(const std::string& key);

 private:
  // The namespaces a namespace selector picks; nullopt: every namespace.
  k8s::Result<std::optional<std::vector<std::string>>> namespaces(const nlohmann::json& selector,
                                                                  const std::string& own);

  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::string, k8s::Clock::MonotonicTime> read_at_;
};

}  // namespace shardscaler::controller
