#include "patches.h"

#include "shardscaler/retention/naming.h"

namespace shardscaler::retention::patches {
namespace {

using Json = nlohmann::json;

Json preconditions(const std::string& uid) { return Json{{"uid", uid}}; }

std::string key(std::string_view k) { return std::string(k); }

// The labels a detach removed, as saved in the annotation; only string values, never our own
// keys, and the name label always the target's (the StatefulSet was matched to it).
Json savedLabels(const ObservedStatefulSet& sts, const Target& target) {
  Json labels = Json::object();
  if (const std::string* saved = sts.annotation(api::kDetachedLabelsAnnotation)) {
    const Json parsed = Json::parse(*saved, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) {
      for (const auto& [k, value] : parsed.items()) {
        if (value.is_string() && !k.starts_with(api::kShardscalerPrefix)) labels[k] = value;
      }
    }
  }
  labels[key(api::kOperatorNameLabel)] = target.name;
  return labels;
}

}  // namespace

Json claimTarget(const Target& target, const std::string& shard_set_name) {
  Json metadata = preconditions(target.uid);
  if (!target.resource_version.empty()) metadata["resourceVersion"] = target.resource_version;
  metadata["annotations"] = Json{{key(api::kClaimedByAnnotation), shard_set_name}};
  return Json{{"metadata", std::move(metadata)}};
}

Json pauseTarget(const Target& target, const std::string& shard_set_name,
                 std::chrono::system_clock::time_point now) {
  Json metadata = preconditions(target.uid);
  if (!target.resource_version.empty()) metadata["resourceVersion"] = target.resource_version;
  metadata["annotations"] = Json{{key(api::kPausedByAnnotation), shard_set_name},
                                 {key(api::kPausedAtAnnotation), formatAnnotationTime(now)}};
  return Json{{"metadata", std::move(metadata)}, {"spec", Json{{"paused", true}}}};
}

Json updateTarget(const Target& target, const TargetUpdate& update) {
  Json patch{{"metadata", preconditions(target.uid)}};
  if (update.precondition_resource_version && !target.resource_version.empty()) {
    patch["metadata"]["resourceVersion"] = target.resource_version;
  }
  if (update.clear_paused_by) {
    patch["metadata"]["annotations"][key(api::kPausedByAnnotation)] = nullptr;
    patch["metadata"]["annotations"][key(api::kPausedAtAnnotation)] = nullptr;
  }
  if (update.release_claim) {
    patch["metadata"]["annotations"][key(api::kClaimedByAnnotation)] = nullptr;
    patch["metadata"]["annotations"][key(api::kScaledDownAtAnnotation)] = nullptr;
  }
  if (update.scaled_down_at) {
    patch["metadata"]["annotations"][key(api::kScaledDownAtAnnotation)] =
        formatAnnotationTime(*update.scaled_down_at);
  }
  if (update.shards) patch["spec"]["shards"] = *update.shards;
  if (update.unpause) patch["spec"]["paused"] = false;
  return patch;
}

Json labelStatefulSet(const ObservedStatefulSet& sts,
                      const std::optional<std::string>& shard_set_name) {
  Json metadata = preconditions(sts.uid);
  metadata["labels"] =
      Json{{key(api::kShardSetLabel), shard_set_name ? Json(*shard_set_name) : Json()}};
  return Json{{"metadata", std::move(metadata)}};
}

Json detach(const ObservedStatefulSet& sts, const Target& target, const std::string& shard_set_name,
            const DeletionDeadline& deadline, std::chrono::system_clock::time_point now) {
  Json removed{{key(api::kOperatorNameLabel), target.name}};
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = Json{{key(api::kOperatorNameLabel), nullptr},
                            {key(api::kRetainedLabel), "true"},
                            {key(api::kShardSetLabel), shard_set_name}};
  metadata["annotations"] = Json{{key(api::kDetachedLabelsAnnotation), removed.dump()},
                                 {key(api::kDeletionTimestampAnnotation), deadline.toAnnotation()},
                                 {key(api::kDetachedAtAnnotation), formatAnnotationTime(now)}};
  return Json{{"metadata", std::move(metadata)}};
}

Json reattach(const ObservedStatefulSet& sts, const Target& target,
              const std::string& shard_set_name) {
  Json labels = savedLabels(sts, target);
  labels[key(api::kRetainedLabel)] = nullptr;
  labels[key(api::kShardSetLabel)] = shard_set_name;  // still guarded, now as an active shard
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = std::move(labels);
  metadata["annotations"] = Json{{key(api::kDetachedLabelsAnnotation), nullptr},
                                 {key(api::kDeletionTimestampAnnotation), nullptr},
                                 {key(api::kDetachedAtAnnotation), nullptr}};
  return Json{{"metadata", std::move(metadata)}};
}

}  // namespace shardscaler::retention::patches
