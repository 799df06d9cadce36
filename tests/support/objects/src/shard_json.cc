#include "shardscaler/test_objects/shard_json.h"

#include "shardscaler/api/well_known.h"
#include "target_api_version.h"

namespace shardscaler::test_objects {

using Json = nlohmann::json;

Json attachedShard(int32_t index, const ShardShape& shape) {
  Json labels{{api::kOperatorNameLabel, shape.target_name},
              {api::kOperatorShardLabel, std::to_string(index)},
              {api::kOperatorModeLabel, planner::operatorMode(shape.kind)}};
  if (shape.managed_by_operator) labels["app.kubernetes.io/managed-by"] = "prometheus-operator";
  if (shape.guard_label) labels[api::kShardSetLabel] = shape.shard_set;
  Json md{{"name", shardName(index, shape.kind, shape.target_name)},
          {"namespace", shape.ns},
          {"labels", std::move(labels)}};
  if (!shape.uid_prefix.empty()) md["uid"] = shape.uid_prefix + std::to_string(index);
  if (shape.resource_version_base) {
    md["resourceVersion"] = std::to_string(*shape.resource_version_base + index);
  }
  if (shape.target_uid) {
    md["ownerReferences"] = Json::array({{{"apiVersion", targetApiVersion(shape.kind)},
                                          {"kind", planner::toString(shape.kind)},
                                          {"name", shape.target_name},
                                          {"uid", *shape.target_uid},
                                          {"controller", true}}});
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "StatefulSet"},
          {"metadata", std::move(md)},
          {"spec", {{"replicas", shape.replicas}}}};
}

std::vector<Json> attachedShards(int32_t from, int32_t to, const ShardShape& shape) {
  std::vector<Json> out;
  for (int32_t i = from; i < to; ++i) out.push_back(attachedShard(i, shape));
  return out;
}

Json retainedShard(int32_t index, const std::string& deadline, const ShardShape& shape) {
  Json j = attachedShard(index, shape);
  Json& md = j["metadata"];
  md["labels"].erase(std::string(api::kOperatorNameLabel));
  md["labels"][api::kRetainedLabel] = "true";
  md["labels"][api::kShardSetLabel] = shape.shard_set;
  md["annotations"][api::kDetachedLabelsAnnotation] =
      Json{{api::kOperatorNameLabel, shape.target_name}}.dump();
  if (!deadline.empty()) md["annotations"][api::kDeletionTimestampAnnotation] = deadline;
  return j;
}

}  // namespace shardscaler::test_objects
