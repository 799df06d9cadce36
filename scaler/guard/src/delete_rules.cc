#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "judgement.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/desired_shards.h"
#include "shardscaler/planner/policy.h"
#include "shardscaler/planner/reasons.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::guard::detail {
namespace {

using api::kDrainingSinceAnnotation;
using k8s::meta::annotation;
using k8s::meta::label;

// Whether an owner reference of `object` names an owner that `is` (apiVersion, kind) accepts.
bool ownedBy(const Json& object,
             const std::function<bool(std::string_view api_version, std::string_view kind)>& is) {
  const Json& refs = k8s::meta::field(object, "metadata", "ownerReferences");
  if (!refs.is_array()) return false;
  return std::ranges::any_of(refs, [&](const Json& ref) {
    if (!ref.is_object()) return false;
    const auto api_version = ref.find("apiVersion");
    const auto kind = ref.find("kind");
    return api_version != ref.end() && api_version->is_string() && kind != ref.end() &&
           kind->is_string() &&
           is(api_version->get_ref<const std::string&>(), kind->get_ref<const std::string&>());
  });
}

bool inGroup(std::string_view api_version, std::string_view group) {
  return api_version.size() > group.size() && api_version.starts_with(group) &&
         api_version[group.size()] == '/';
}

// An owner reference to a Prometheus or PrometheusAgent: the operator's shards carry one, and a
// detach by a shardscaler version before the ShardSet took the reference over kept it.
bool ownedByATarget(const Json& object) {
  return ownedBy(object, [](std::string_view api_version, std::string_view kind) {
    const auto target_kind = planner::parseTargetKind(kind);
    return target_kind && inGroup(api_version, planner::targetResource(*target_kind).group);
  });
}

bool ownedByAShardSet(const Json& object) {
  return ownedBy(object, [](std::string_view api_version, std::string_view kind) {
    return kind == api::kShardSetKind && inGroup(api_version, api::kGroup);
  });
}

}  // namespace

// The garbage collector deletes an object once none of its owners is left standing: each is gone,
// or is being deleted in the foreground. A retained shard's owner is its ShardSet (a detach moves
// the reference there), whose finalizer drops the reference before the ShardSet goes. So its
// DELETE of a retained shard the target does not own follows the ShardSet (a foreground deletion
// deletes the dependents before the finalizer has run, and while no replica leads none runs), or
// acts on a read from before the finalizer dropped the reference. It is refused whether the
// ShardSet and the target exist or not; only a namespace being deleted takes the shard. Nothing
// waits on the refusal: the reference carries no blockOwnerDeletion, so the collector finishes the
// foreground deletion and the finalizer lets the shard go.
std::optional<Verdict> Judgement::collectRetained() {
  if (auto v = namespaceCleanup()) return *v;
  if (ownedByATarget(subject())) return std::nullopt;
  const std::string_view how =
      ownedByAShardSet(subject())
          ? "which owns it"
          : "and nothing owns it (the DELETE acts on a read from before the ShardSet let it go)";
  return deny(
      kRuleRetainedByShardSet,
      fmt::format("{} is retained by ShardSet {}, {}: the garbage collector may delete a "
                  "retained shard only with its target or its namespace. Deleting the "
                  "ShardSet (with any cascade) lets go of it: shardscaler's finalizer "
                  "drops the ShardSet's ownerReference and names the StatefulSet in the "
                  "Event {}; it stays until a user deletes it.",
                  shardText(), verdict_.shard_set, how, planner::kReasonRetainedShardsOrphaned));
}

std::optional<Verdict> Judgement::deleteRetained() {
  const std::string* deadline = deadlineAnnotation();
  if (deadline != nullptr) verdict_.deadline = untrustedText(*deadline);
  if (deadline != nullptr) {
    auto parsed = planner::parseDeletionTimestamp(*deadline);
    if (parsed && parsed->expiredAt(now_)) return deleteDue();
  }
  return deny(
      kRuleRetainedBeforeDeadline,
      fmt::format("{} {}; shardscaler deletes it once that passes.", shardText(), retainedText()));
}

// A retained shard past its deadline under a drain goes only once drained (shardscaler marks it
// drained-at right before deleting it), or once the drain's timeout passed under onTimeout:
// Delete, counted as the planner counts it: from its draining-since mark (docs/design/drain.md).
std::optional<Verdict> Judgement::deleteDue() {
  auto drain = planner::resolveDrainPolicy(shard_set_);
  if (!drain) {
    return deny(kRuleNotDrained,
                fmt::format("{} is due, but ShardSet {}'s drain is invalid ({}), so whether its "
                            "data was shipped cannot be told (never delete on doubt).",
                            shardText(), verdict_.shard_set, drain.error().front().describe()));
  }
  if (!drain->enabled || annotation(subject(), api::kDrainedAtAnnotation) != nullptr) {
    return std::nullopt;
  }
  const std::optional<std::chrono::system_clock::time_point> draining_since =
      planner::parseAnnotationTime(annotation(subject(), kDrainingSinceAnnotation));
  const std::optional<std::chrono::system_clock::time_point> gives_up_at =
      draining_since ? std::optional(drain->givesUpAt(*draining_since)) : std::nullopt;
  if (drain->on_timeout == planner::OnTimeout::Delete && gives_up_at && now_ >= *gives_up_at) {
    return std::nullopt;
  }
  const std::string times_out =
      drain->on_timeout == planner::OnTimeout::Delete && gives_up_at
          ? fmt::format(" or its drain times out at {}",
                        k8s::formatRfc3339(k8s::Timestamp::fromTimePoint(*gives_up_at)))
          : "";
  return deny(kRuleNotDrained,
              fmt::format("{} is due, but ShardSet {} has not found its data shipped yet (no {} "
                          "annotation); shardscaler deletes it once it drains{}.",
                          shardText(), verdict_.shard_set, api::kDrainedAtAnnotation, times_out));
}

std::optional<Verdict> Judgement::operatorRetention() {
  const std::string* deadline = annotation(subject(), api::kOperatorDeletionDeadlineAnnotation);
  if (deadline == nullptr) return std::nullopt;
  auto parsed = planner::parseDeletionTimestamp(*deadline);
  if (parsed && parsed->expiredAt(now_)) return std::nullopt;
  verdict_.deadline = untrustedText(*deadline);
  const std::string_view which = !parsed
                                     ? "which is unreadable, so it is kept (never delete on doubt)"
                                 : parsed->isNever() ? "which means never"
                                                     : "which has not passed";
  return deny(kRuleRetainedBeforeDeadline,
              fmt::format("{} carries {} \"{}\", {}: the operator's own shard retention keeps it.",
                          shardText(), api::kOperatorDeletionDeadlineAnnotation, *deadline, which));
}

std::optional<Verdict> Judgement::deleteActive() {
  const std::string* index_text = label(subject(), api::kOperatorShardLabel);
  if (!verdict_.shard_index) {
    const std::string label_text =
        index_text ? fmt::format("{}, not a shard index", valueText(index_text)) : "missing";
    return deny(
        kRuleUnknownShardIndex,
        fmt::format("{} is labelled for ShardSet {} but its {} label is {}, so it counts as "
                    "an active shard (never delete on doubt).",
                    shardText(), verdict_.shard_set, api::kOperatorShardLabel, label_text));
  }
  const std::string scale_hint =
      fmt::format(" Change the shard count with `kubectl scale shardset/{} -n {} --replicas=N`.",
                  verdict_.shard_set, request_.ns);
  if (!target_kind_) {
    return deny(
        kRuleActiveShard,
        fmt::format("{} belongs to ShardSet {}, whose targetRef.kind {} is not Prometheus "
                    "or PrometheusAgent, so it counts as an active shard (never delete on "
                    "doubt).",
                    shardText(), verdict_.shard_set, valueText(&shard_set_.spec.target_ref.kind)));
  }
  const LiveRead& t = target();
  std::optional<planner::Target> parsed_target;
  if (t.state == LiveRead::State::Failed) return readFailed(verdict_.target, t.error);
  if (t.state == LiveRead::State::Found) {
    auto p = planner::parseTarget(t.object, *target_kind_);
    if (!p) {
      return deny(kRuleReadFailed,
                  fmt::format("cannot read {} (its spec does not decode), so the DELETE of {} is "
                              "refused until it can be checked.",
                              verdict_.target, shardText()),
                  p.error().describe());
    }
    parsed_target = std::move(*p);
  }
  const auto desired = planner::desiredShards(
      shard_set_.spec.shards, shard_set_.spec.min_shards, shard_set_.spec.max_shards,
      parsed_target ? parsed_target->topologyZones() : std::nullopt);
  if (!desired || !shard_set_.spec_errors.empty()) {
    const auto& errors = desired ? shard_set_.spec_errors : desired.error();
    const auto& first = errors.front();
    return deny(
        kRuleActiveShard,
        fmt::format("{} belongs to ShardSet {}, whose spec is invalid ({}), so every shard "
                    "labelled for it counts as active (never delete on doubt).{}",
                    shardText(), verdict_.shard_set, untrustedText(first.field), scale_hint),
        first.describe());
  }
  const int32_t target_shards = parsed_target ? parsed_target->effectiveShards() : 0;
  const int32_t threshold = std::max(target_shards, desired->want);
  if (*verdict_.shard_index >= threshold) return deleteAboveTheCount(parsed_target);
  const std::string runs = parsed_target ? fmt::format("{} runs {} shard{}", verdict_.target,
                                                       target_shards, target_shards == 1 ? "" : "s")
                                         : fmt::format("{} was not found", verdict_.target);
  return deny(kRuleActiveShard,
              fmt::format("{} is an active shard of ShardSet {} ({}, the ShardSet wants {}); "
                          "deleting it would lose the data it holds.{}",
                          shardText(), verdict_.shard_set, runs, desired->want, scale_hint));
}

// An attached shard at or above both counts is the operator's to delete only under Delete. Under
// Retain shardscaler detaches it and keeps it until its deadline, so a DELETE comes from an
// operator whose view lags: a sync that read a lower count than a scale-up just re-attached for,
// or a scale-down shardscaler has not detached yet (a re-attached shard the ShardSet was scaled
// back down from).
std::optional<Verdict> Judgement::deleteAboveTheCount(const std::optional<planner::Target>& t) {
  if (!t) return std::nullopt;  // no target: nothing runs the shard
  auto policy = planner::resolveRetentionPolicy(shard_set_, *t);
  if (!policy) {
    return deny(
        kRuleActiveShard,
        fmt::format("{} belongs to ShardSet {}, whose retention policy is invalid ({}), so "
                    "it counts as an active shard (never delete on doubt).",
                    shardText(), verdict_.shard_set, untrustedText(policy.error().front().field)),
        policy.error().front().describe());
  }
  auto drain = planner::resolveDrainPolicy(shard_set_);
  if (policy->when_scaled != planner::WhenScaled::Retain && drain && !drain->enabled) {
    return std::nullopt;
  }
  if (policy->when_scaled != planner::WhenScaled::Retain) {
    return deny(kRuleRetainOnScaleDown,
                fmt::format("{} is beyond the shard count, but ShardSet {} drains removed shards "
                            "before deleting them (spec.shardRetentionPolicy.drain): shardscaler "
                            "detaches it and deletes it once its data is shipped; deleting it now "
                            "could lose what it has not shipped.",
                            shardText(), verdict_.shard_set));
  }
  return deny(
      kRuleRetainOnScaleDown,
      fmt::format("{} is beyond the shard count, but ShardSet {} retains scaled-away shards "
                  "(whenScaled=Retain, from {}): shardscaler detaches it and keeps it "
                  "until its deadline; deleting it now would lose the data it holds.",
                  shardText(), verdict_.shard_set, policy->when_scaled_source));
}

}  // namespace shardscaler::guard::detail
