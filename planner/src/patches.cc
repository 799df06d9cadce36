#include "patches.h"

#include "shardscaler/api/shard_set.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/operator_retention.h"

namespace shardscaler::planner::patches {
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
  Json patch{{"metadata", std::move(metadata)}};
  if (needsRetentionHold(target)) addRetentionHold(patch, target);
  return patch;
}

Json pauseTarget(const Target& target, const std::string& shard_set_name,
                 std::chrono::system_clock::time_point now) {
  Json metadata = preconditions(target.uid);
  if (!target.resource_version.empty()) metadata["resourceVersion"] = target.resource_version;
  metadata["annotations"] = Json{{key(api::kPausedByAnnotation), shard_set_name},
                                 {key(api::kPausedAtAnnotation), formatAnnotationTime(now)}};
  Json patch{{"metadata", std::move(metadata)}, {"spec", Json{{"paused", true}}}};
  if (needsRetentionHold(target)) addRetentionHold(patch, target);
  return patch;
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
    addRetentionRelease(patch, target);
  }
  if (update.scaled_down_at) {
    patch["metadata"]["annotations"][key(api::kScaledDownAtAnnotation)] =
        formatAnnotationTime(*update.scaled_down_at);
  }
  if (update.shards) patch["spec"]["shards"] = *update.shards;
  if (update.scrape_classes) patch["spec"]["scrapeClasses"] = *update.scrape_classes;
  if (update.unpause) patch["spec"]["paused"] = false;
  return patch;
}

namespace {

Json ownerJson(const OwnerReference& ref) {
  Json j{{"apiVersion", ref.api_version}, {"kind", ref.kind}, {"name", ref.name}, {"uid", ref.uid}};
  if (ref.controller) j["controller"] = true;
  if (ref.block_owner_deletion) j["blockOwnerDeletion"] = true;
  return j;
}

// The StatefulSet's ownerReferences with the one to `from_uid` replaced by `to` (a merge patch
// replaces the whole list); nullopt when none names `from_uid`.
std::optional<Json> movedOwner(const ObservedStatefulSet& sts, const std::string& from_uid,
                               const OwnerReference& to) {
  Json refs = Json::array();
  bool moved = false;
  for (const OwnerReference& ref : sts.owner_references) {
    if (ref.uid == from_uid && !moved) {
      refs.push_back(ownerJson(to));
      moved = true;
    } else if (ref.uid != to.uid) {
      refs.push_back(ownerJson(ref));
    }
  }
  if (!moved) return std::nullopt;
  return refs;
}

OwnerReference shardSetOwner(const ShardSetRef& shard_set) {
  return {.api_version = std::string(api::kApiVersion),
          .kind = std::string(api::kShardSetKind),
          .name = shard_set.name,
          .uid = shard_set.uid,
          .controller = true};
}

// As the operator writes it (pkg/prometheus: controller and blockOwnerDeletion both true).
OwnerReference targetOwner(const Target& target) {
  const k8s::Resource resource = targetResource(target.kind);
  return {.api_version = resource.group + "/" + resource.version,
          .kind = std::string(toString(target.kind)),
          .name = target.name,
          .uid = target.uid,
          .controller = true,
          .block_owner_deletion = true};
}

}  // namespace

Json labelStatefulSet(const ObservedStatefulSet& sts,
                      const std::optional<std::string>& shard_set_name) {
  Json metadata = preconditions(sts.uid);
  metadata["labels"] =
      Json{{key(api::kShardSetLabel), shard_set_name ? Json(*shard_set_name) : Json()}};
  return Json{{"metadata", std::move(metadata)}};
}

Json detach(const ObservedStatefulSet& sts, const Target& target, const ShardSetRef& shard_set,
            const DeletionDeadline& deadline, std::chrono::system_clock::time_point now) {
  Json removed{{key(api::kOperatorNameLabel), target.name}};
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = Json{{key(api::kOperatorNameLabel), nullptr},
                            {key(api::kRetainedLabel), "true"},
                            {key(api::kShardSetLabel), shard_set.name}};
  if (!shard_set.uid.empty()) {
    if (auto refs = movedOwner(sts, target.uid, shardSetOwner(shard_set))) {
      metadata["ownerReferences"] = std::move(*refs);
    }
  }
  metadata["annotations"] =
      Json{{key(api::kDetachedLabelsAnnotation), removed.dump()},
           {key(api::kDeletionDeadlineAnnotation), deadline.toAnnotation()},
           {key(api::kDeletionTimestampAnnotation), deadline.toAnnotation()},
           {key(api::kOperatorDeletionDeadlineAnnotation), deadline.toAnnotation()},
           {key(api::kDetachedAtAnnotation), formatAnnotationTime(now)},
           // A fresh life: the drain of an earlier one (before someone labelled it back) says
           // nothing about what this one holds.
           {key(api::kDrainingSinceAnnotation), nullptr},
           {key(api::kDrainedAtAnnotation), nullptr}};
  return Json{{"metadata", std::move(metadata)}};
}

std::optional<Json> adopt(const ObservedStatefulSet& sts, const Target& target,
                          const ShardSetRef& shard_set) {
  auto refs = movedOwner(sts, target.uid, shardSetOwner(shard_set));
  if (!refs) return std::nullopt;
  Json metadata = preconditions(sts.uid);
  metadata["ownerReferences"] = std::move(*refs);
  // The deadline under the names a detach writes now, copied as it is (shardscaler's own name is
  // also what tells a plan from the caches that the ShardSet holds the reference).
  if (const std::string* seed = sts.annotation(api::kDeletionTimestampAnnotation)) {
    for (std::string_view name :
         {api::kDeletionDeadlineAnnotation, api::kOperatorDeletionDeadlineAnnotation}) {
      if (sts.annotation(name) == nullptr) metadata["annotations"][key(name)] = *seed;
    }
  }
  return Json{{"metadata", std::move(metadata)}};
}

Json orphan(const ObservedStatefulSet& sts, const ShardSetRef& shard_set) {
  Json refs = Json::array();
  for (const OwnerReference& ref : sts.owner_references) {
    if (ref.uid != shard_set.uid) refs.push_back(ownerJson(ref));
  }
  Json metadata = preconditions(sts.uid);
  metadata["ownerReferences"] = std::move(refs);
  return Json{{"metadata", std::move(metadata)}};
}

Json markDrain(const ObservedStatefulSet& sts, std::string_view annotation,
               std::chrono::system_clock::time_point at) {
  Json metadata = preconditions(sts.uid);
  metadata["annotations"] = Json{{key(annotation), formatAnnotationTime(at)}};
  return Json{{"metadata", std::move(metadata)}};
}

Json reattach(const ObservedStatefulSet& sts, const Target& target, const ShardSetRef& shard_set) {
  Json labels = savedLabels(sts, target);
  labels[key(api::kRetainedLabel)] = nullptr;
  labels[key(api::kShardSetLabel)] = shard_set.name;  // still guarded, now as an active shard
  Json metadata = preconditions(sts.uid);
  metadata["labels"] = std::move(labels);
  if (!shard_set.uid.empty()) {
    if (auto refs = movedOwner(sts, shard_set.uid, targetOwner(target))) {
      metadata["ownerReferences"] = std::move(*refs);
    }
  }
  metadata["annotations"] = Json{{key(api::kDetachedLabelsAnnotation), nullptr},
                                 {key(api::kDeletionDeadlineAnnotation), nullptr},
                                 {key(api::kDeletionTimestampAnnotation), nullptr},
                                 {key(api::kOperatorDeletionDeadlineAnnotation), nullptr},
                                 {key(api::kDetachedAtAnnotation), nullptr},
                                 {key(api::kDrainingSinceAnnotation), nullptr},
                                 {key(api::kDrainedAtAnnotation), nullptr}};
  return Json{{"metadata", std::move(metadata)}};
}

}  // namespace shardscaler::planner::patches
