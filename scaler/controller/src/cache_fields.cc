#include "shardscaler/controller/cache_fields.h"

#include <string_view>

#include "shardscaler/api/well_known.h"

namespace shardscaler::controller {

// StatefulSets (as PartialObjectMetadata): namespace and the operator's name and mode labels
// (-> the target's ShardSets), the guard label (-> its ShardSet), and what a plan reads that can
// change: generation (spec.replicas), deletion, the shard index and retained labels, the
// deadline annotations. Not the uid and owner references (0.5 KB a StatefulSet in the DOM):
// a plan from the caches takes a shard as the target's by our guard label (observeCached).
std::shared_ptr<const k8s::FieldMask> statefulSetCacheFields() {
  auto mask = k8s::FieldMask::keepNone();
  for (std::string_view f :
       {"namespace", "name", "resourceVersion", "generation", "deletionTimestamp"}) {
    mask.keep({"metadata", f});
  }
  for (std::string_view label :
       {api::kOperatorNameLabel, api::kOperatorModeLabel, api::kOperatorShardLabel,
        api::kShardSetLabel, api::kRetainedLabel}) {
    mask.keep({"metadata", "labels", label});
  }
  for (std::string_view annotation :
       {api::kDeletionTimestampAnnotation, api::kDeletionDeadlineAnnotation,
        api::kOperatorDeletionDeadlineAnnotation, api::kDetachedAtAnnotation,
        api::kDrainingSinceAnnotation, api::kDrainedAtAnnotation}) {
    mask.keep({"metadata", "annotations", annotation});
  }
  return std::make_shared<const k8s::FieldMask>(std::move(mask));
}

// Targets: the key, what marks a spec or ownership change (generation, deletion, our claim and
// pause annotations), whether the operator acknowledged a pause (status.paused and the
// conditions' observedGeneration), so that a transition waiting for it wakes when it comes, and
// the uid and spec fields the planner reads (planner::parseTarget), spec.web among them: whether
// the pods serve their own /metrics over TLS. spec.scrapeClasses too: a plan from the caches that
// cannot see shardscaler's low-churn rules takes the target for one without them, and would leave
// them in force after spec.resharding is set back to Operator.
std::shared_ptr<const k8s::FieldMask> targetCacheFields() {
  auto mask = k8s::FieldMask::keepNone();
  for (std::string_view f :
       {"namespace", "name", "uid", "resourceVersion", "generation", "deletionTimestamp"}) {
    mask.keep({"metadata", f});
  }
  for (std::string_view f : {"shards", "replicas", "paused", "retention", "retentionSize",
                             "shardRetentionPolicy", "shardingStrategy", "web", "scrapeClasses"}) {
    mask.keep({"spec", f});
  }
  // How many remote-write queues a shard runs (a drain requires each): one field an entry keeps
  // the count, not the entries' credentials and relabellings.
  mask.keep({"spec", "remoteWrite", "url"});
  for (std::string_view annotation :
       {api::kClaimedByAnnotation, api::kPausedByAnnotation, api::kPausedAtAnnotation,
        api::kScaledDownAtAnnotation, api::kSavedShardRetentionPolicyAnnotation}) {
    mask.keep({"metadata", "annotations", annotation});
  }
  mask.keep({"status", "paused"}).keep({"status", "conditions", "observedGeneration"});
  return std::make_shared<const k8s::FieldMask>(std::move(mask));
}

// ShardSets are read whole by reconcile (from this cache): everything but managedFields.
std::shared_ptr<const k8s::FieldMask> shardSetCacheFields() {
  return std::make_shared<const k8s::FieldMask>(
      k8s::FieldMask::keepAll().drop({"metadata", "managedFields"}));
}

}  // namespace shardscaler::controller
