#include "shardscaler/retention/status.h"

namespace shardscaler::retention {

nlohmann::json toJson(const ShardSetStatus& status) {
  nlohmann::json retained = nlohmann::json::array();
  for (const auto& r : status.retained_shards) {
    retained.push_back({{"index", r.index},
                        {"statefulSet", r.stateful_set},
                        {"deletionTimestamp", r.deletion_timestamp}});
  }
  nlohmann::json conditions = nlohmann::json::array();
  for (const auto& c : status.conditions) conditions.push_back(toJson(c));
  nlohmann::json j{{"observedGeneration", status.observed_generation},
                   {"shards", status.shards},
                   {"selector", status.selector},
                   {"retainedShards", std::move(retained)},
                   {"conditions", std::move(conditions)}};
  if (status.target_shards) j["targetShards"] = *status.target_shards;
  return j;
}

}  // namespace shardscaler::retention
