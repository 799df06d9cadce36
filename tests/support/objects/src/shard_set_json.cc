#include "shardscaler/test_objects/shard_set_json.h"

namespace shardscaler::test_objects {

using Json = nlohmann::json;

Json shardSetJson(int64_t shards, const Json& spec_patch, const ShardSetShape& shape) {
  Json j{{"apiVersion", "shardscaler.io/v1alpha1"},
         {"kind", "ShardSet"},
         {"metadata", {{"name", shape.name}, {"namespace", shape.ns}}},
         {"spec",
          {{"targetRef",
            {{"kind", planner::toString(shape.target_kind)}, {"name", shape.target_name}}},
           {"shards", shards}}}};
  if (shape.generation) j["metadata"]["generation"] = *shape.generation;
  if (!spec_patch.is_null()) j["spec"].merge_patch(spec_patch);  // {} arrives as null
  return j;
}

}  // namespace shardscaler::test_objects
