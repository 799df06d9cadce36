// The objects besides StatefulSets that the emulated operator keeps for each target: the config
// Secret (generated scrape configuration) and the governing Service. It writes only those two,
// and records every write it makes.
#pragma once

#include <string>
#include <vector>

#include "scrape_jobs.h"
#include "shard_naming.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "target_kind.h"
#include "write_recorder.h"

namespace shardscaler::emulator {

class TargetAssets {
 public:
  TargetAssets(const TargetKind& kind, k8s::KubeClient& client, WriteRecorder& recorder)
      : kind_(kind), client_(client), recorder_(recorder) {}

  // createOrUpdateConfigurationSecret: an empty Secret once for unmanaged configuration, else
  // the generated configuration on every sync.
  k8s::Result<void> syncConfigSecret(const Json& target);
  // CreateOrUpdateService of the governing Service, keeping the server's immutable fields.
  k8s::Result<void> syncGoverningService(const Json& target);

 private:
  k8s::Result<std::string> loadAdditionalScrapeConfigs(const Json& target);
  // The Probes and ScrapeConfigs the target selects (ResourceSelector: <kind>Selector, null
  // selecting none, in the namespaces of <kind>NamespaceSelector, null meaning the target's own).
  k8s::Result<ScrapeObjects> loadScrapeObjects(const Json& target);
  k8s::Result<std::vector<Json>> selectObjects(const Json& target, const k8s::Resource& resource,
                                               const char* selector_field,
                                               const char* namespace_selector_field);

  const TargetKind& kind_;
  k8s::KubeClient& client_;
  WriteRecorder& recorder_;
};

}  // namespace shardscaler::emulator
