#include "shardscaler/test_objects/target_json.h"

#include "shardscaler/api/well_known.h"
#include "target_api_version.h"

namespace shardscaler::test_objects {

using Json = nlohmann::json;

Json targetJson(std::optional<int64_t> shards, const Json& spec_patch, const TargetShape& shape) {
  Json j{{"apiVersion", targetApiVersion(shape.kind)},
         {"kind", planner::toString(shape.kind)},
         {"metadata", {{"name", shape.name}, {"namespace", shape.ns}}},
         {"spec", {{"replicas", shape.replicas}}}};
  Json& md = j["metadata"];
  if (!shape.uid.empty()) md["uid"] = shape.uid;
  if (!shape.resource_version.empty()) md["resourceVersion"] = shape.resource_version;
  if (shape.generation) md["generation"] = *shape.generation;
  if (!shape.claimed_by.empty()) md["annotations"][api::kClaimedByAnnotation] = shape.claimed_by;
  if (shards) j["spec"]["shards"] = *shards;
  if (!spec_patch.is_null()) j["spec"].merge_patch(spec_patch);  // {} arrives as null
  return j;
}

Json pausedBy(Json target, const std::string& who) {
  target["spec"]["paused"] = true;
  if (!who.empty()) target["metadata"]["annotations"][api::kPausedByAnnotation] = who;
  target["status"] = {{"paused", true},
                      {"conditions",
                       {{{"type", "Available"}, {"observedGeneration", 7}},
                        {{"type", "Reconciled"}, {"observedGeneration", 7}}}}};
  return target;
}

}  // namespace shardscaler::test_objects
