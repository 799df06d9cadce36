#include "shardscaler/planner/shard_inventory.h"

#include <algorithm>

namespace shardscaler::planner {
namespace {

bool ownedByTarget(const ObservedStatefulSet& sts, const Target& target) {
  if (target.uid.empty()) return false;
  return std::ranges::any_of(sts.owner_references, [&](const OwnerReference& ref) {
    return ref.uid == target.uid && ref.kind == toString(target.kind);
  });
}

bool ownedByShardSet(const ObservedStatefulSet& sts, const api::ShardSet& shard_set) {
  if (shard_set.uid.empty()) return false;
  return std::ranges::any_of(sts.owner_references, [&](const OwnerReference& ref) {
    return ref.uid == shard_set.uid && ref.kind == api::kShardSetKind;
  });
}

void readDeadline(ShardStatefulSet& shard) {
  std::string_view name = api::kDeletionDeadlineAnnotation;
  const std::string* value = shard.object->annotation(name);
  if (value == nullptr) {
    name = api::kDeletionTimestampAnnotation;
    value = shard.object->annotation(name);
  }
  if (value == nullptr) {
    shard.deadline_problem = "annotation " + std::string(api::kDeletionDeadlineAnnotation) +
                             " (or " + std::string(api::kDeletionTimestampAnnotation) + ") missing";
    return;
  }
  if (auto d = parseDeletionTimestamp(*value)) {
    shard.deadline = *d;
  } else {
    shard.deadline_problem = "annotation " + std::string(name) + ": " + d.error();
  }
}

void readOperatorDeadline(ShardStatefulSet& shard) {
  const std::string* value = shard.object->annotation(api::kOperatorDeletionDeadlineAnnotation);
  if (value == nullptr) return;
  auto d = parseDeletionTimestamp(*value);
  if (!d) {
    shard.operator_deadline_unreadable = true;
    return;
  }
  shard.operator_deadline = *d;
  // A detach writes its deadline under all three names; the operator, taking a shard back,
  // keeps the value it finds. The same deadline under one of shardscaler's names is that copy.
  for (std::string_view ours :
       {api::kDeletionDeadlineAnnotation, api::kDeletionTimestampAnnotation}) {
    const std::string* own = shard.object->annotation(ours);
    if (own == nullptr) continue;
    auto parsed = parseDeletionTimestamp(*own);
    if (parsed && *parsed == *d) shard.operator_deadline_copied = true;
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
    const bool owned_by_target = ownedByTarget(sts, target);
    const bool owned_by_shard_set = ownedByShardSet(sts, shard_set);
    if (index < 0 || sts.name != statefulSetName(target.kind, target.name, index) ||
        (!owned_by_target && !owned_by_shard_set) ||
        (mode != nullptr && *mode != operatorMode(target.kind))) {
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
          ours && (!owned_by_target || sts.label(api::kRetainedLabel) != nullptr ||
                   sts.annotation(api::kDeletionTimestampAnnotation) != nullptr ||
                   sts.annotation(api::kDeletionDeadlineAnnotation) != nullptr ||
                   sts.annotation(api::kDetachedLabelsAnnotation) != nullptr);
      if (shard.carries_retention_marks) readDeadline(shard);
      readOperatorDeadline(shard);
      inventory.attached.push_back(std::move(shard));
      continue;
    }
    const std::string* retained = sts.label(api::kRetainedLabel);
    if (retained == nullptr || *retained != "true" || !ours) {
      inventory.ignored.push_back(&sts);
      continue;
    }
    shard.guard_labelled = true;
    shard.owned_by_shard_set = owned_by_shard_set;
    readDeadline(shard);
    readOperatorDeadline(shard);
    shard.detached_at = parseAnnotationTime(sts.annotation(api::kDetachedAtAnnotation));
    shard.draining_since = parseAnnotationTime(sts.annotation(api::kDrainingSinceAnnotation));
    shard.drained_at = parseAnnotationTime(sts.annotation(api::kDrainedAtAnnotation));
    inventory.retained.push_back(std::move(shard));
  }
  const auto by_index = [](const ShardStatefulSet& a, const ShardStatefulSet& b) {
    return a.index < b.index;
  };
  std::ranges::sort(inventory.attached, by_index);
  std::ranges::sort(inventory.retained, by_index);
  return inventory;
}

}  // namespace shardscaler::planner
