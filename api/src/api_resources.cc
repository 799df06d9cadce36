#include "shardscaler/api/api_resources.h"

#include "shardscaler/api/shard_set.h"

namespace shardscaler::api {

k8s::Resource shardSets() {
  return {std::string(kGroup), std::string(kVersion), std::string(kShardSetPlural), true};
}

}  // namespace shardscaler::api
