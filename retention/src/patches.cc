#include "patches.h"

#include "shardscaler/retention/naming.h"

namespace shardscaler::retention::patches {
namespace {

using Json = nlohmann::json;

Json preconditions(const std::string& uid) { return Json{{"uid", uid}}; }

// The labels a detach removed, as saved in the annotation; only string values, never our own
// keys, and the name label always the target's (the StatefulSet was matched to it).
Json savedLabels(const ObservedStatefulSet& sts, const Target& target) {
  Json labels = Json::object();
  if (const std::string* saved = sts.annotation(kDetachedLabelsAnnotation)) {
    const Json parsed = Json::parse(*saved, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_object()) {
      for (const auto& [key, value] : parsed.items()) {
        if (value.is_string() && !key.starts_with("shardscaler.io/")) labels[key] = value;
      }
    }
  }
  labels[std::string(kOperatorNameLabel)] = target.name;
  return labels;
}

}  // namespace

Json pauseTarget(const Target& target, const std::string& shard_set_name) {
  Json metadata = preconditions(target.uid);
  if (!target.resource_version.empty()) metadata["resourceVersion"] = target.resource_version;
  metadata["annotations"] = Json{{std::string(kPausedByAnnotation), shard_set_name}};
  return Json{{"metadata", std::move(metadata)}, {"spec", Json{{"paused", true}}}};
}

Json updateTarget(const Target& target, std::optional<int32_t> shards, bool unpause,
                  bool clear_paused_by) {
  Json patch{{"metadata", preconditions(target.uid)}};
  if (clear_paused_by) {
    patch["metadata"]["annotations"] = Json{{std::string(kPausedByAnnotation), nullptr}};
  }
  if (shards) patch["spec"]["shards"] = *shards;
  if (unpause) patch["spec"]["paused"] = false;
  return patch;
}

Json detach(const ObservedStatefulSet& sts, const Target& target, const std::string& shard_set_name,
            const DeletionDeadline& deadline) {
  Json removed{{std::string(kOperatorNameLabel), target.name}};
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = Json{{std::string(kOperatorNameLabel), nullptr},
                            {std::string(kRetainedLabel), "true"},
                            {std::string(kShardSetLabel), shard_set_name}};
  metadata["annotations"] =
      Json{{std::string(kDetachedLabelsAnnotation), removed.dump()},
           {std::string(kDeletionTimestampAnnotation), deadline.toAnnotation()}};
  return Json{{"metadata", std::move(metadata)}};
}

Json reattach(const ObservedStatefulSet& sts, const Target& target) {
  Json labels = savedLabels(sts, target);
  labels[std::string(kRetainedLabel)] = nullptr;
  labels[std::string(kShardSetLabel)] = nullptr;
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = std::move(labels);
  metadata["annotations"] = Json{{std::string(kDetachedLabelsAnnotation), nullptr},
                                 {std::string(kDeletionTimestampAnnotation), nullptr}};
  return Json{{"metadata", std::move(metadata)}};
}

}  // namespace shardscaler::retention::patches
