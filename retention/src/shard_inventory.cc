#include "shardscaler/retention/shard_inventory.h"

#include <algorithm>

namespace shardscaler::retention {
namespace {

bool ownedByTarget(const ObservedStatefulSet& sts, const Target& target) {
  if (target.uid.empty()) return false;
  return std::ranges::any_of(sts.owner_references, [&](const OwnerReference& ref) {
    return ref.uid == target.uid && ref.kind == toString(target.kind);
  });
}

void readDeadline(ShardStatefulSet& shard) {
  const std::string* value = shard.object->annotation(api::kDeletionTimestampAnnotation);
  if (value == nullptr) {
    shard.deadline_problem =
        "annotation " + std::string(api::kDeletionTimestampAnnotation) + " missing";
    return;
  }
  if (auto d = parseDeletionTimestamp(*value)) {
    shard.deadline = *d;
  } else {
    shard.deadline_problem =
        "annotation " + std::string(api::kDeletionTimestampAnnotation) + ": " + d.error();
  }
}

}  // namespace

ShardInventory takeInventory(const api::ShardSet& shard_set, const Target& target,
                             std::span<const ObservedStatefulSet> observed) {
  ShardInventory inventory;
  for (const auto& sts : observed) {
    const std::string* shard_label = sts.label(api::kOperatorShardLabel);
    const int32_t index = shard_label != nullptr ? parseShardIndex(*shard_label).value_or(-1) : -1;
    const std::string* mode = sts.label(api::kOperatorModeLabel);
    if (index < 0 || sts.name != statefulSetName(target.kind, target.name, index) ||
        !ownedByTarget(sts, target) || (mode != nullptr && *mode != operatorMode(target.kind))) {
      inventory.ignored.push_back(&sts);
      continue;
    }
    const std::string* name_label = sts.label(api::kOperatorNameLabel);
    const std::string* shardset_label = sts.label(api::kShardSetLabel);
    const bool ours = shardset_label != nullptr && *shardset_label == shard_set.name;
    ShardStatefulSet shard;
    shard.index = index;
    shard.object = &sts;
    if (name_label != nullptr) {
      if (*name_label != target.name) {
        inventory.ignored.push_back(&sts);
        continue;
      }
      shard.guard_labelled = ours;
      // The guard label alone is what every active shard carries; the marks are what a detach
      // wrote and a re-attach removes.
      shard.carries_retention_marks =
          ours && (sts.label(api::kRetainedLabel) != nullptr ||
                   sts.annotation(api::kDeletionTimestampAnnotation) != nullptr ||
                   sts.annotation(api::kDetachedLabelsAnnotation) != nullptr);
      if (shard.carries_retention_marks) readDeadline(shard);
      inventory.attached.push_back(std::move(shard));
      continue;
    }
    const std::string* retained = sts.label(api::kRetainedLabel);
    if (retained == nullptr || *retained != "true" || !ours) {
      inventory.ignored.push_back(&sts);
      continue;
    }
    shard.guard_labelled = true;
    readDeadline(shard);
    shard.detached_at = parseAnnotationTime(sts.annotation(api::kDetachedAtAnnotation));
    inventory.retained.push_back(std::move(shard));
  }
  const auto by_index = [](const ShardStatefulSet& a, const ShardStatefulSet& b) {
    return a.index < b.index;
  };
  std::ranges::sort(inventory.attached, by_index);
  std::ranges::sort(inventory.retained, by_index);
  return inventory;
}

}  // namespace shardscaler::retention
