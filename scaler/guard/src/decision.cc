#include "shardscaler/guard/decision.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "denial_text.h"
#include "judgement.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/desired_shards.h"
#include "shardscaler/planner/policy.h"
#include "shardscaler/planner/reasons.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::guard {
namespace {

using Json = nlohmann::json;
using api::kDeletionDeadlineAnnotation;
using api::kDeletionTimestampAnnotation;
using api::kDrainedAtAnnotation;
using api::kDrainingSinceAnnotation;
using api::kOperatorDeletionDeadlineAnnotation;
using api::kOperatorShardLabel;
using api::kRetainedLabel;
using api::kShardSetLabel;

using detail::valueText;
using k8s::meta::annotation;
using k8s::meta::label;

// What the DELETE rules read of a shard, so that no UPDATE by anyone but shardscaler may change
// it: a changed shard index, a moved deadline or a dropped ShardSet label would let a later
// DELETE through.
struct GuardedKey {
  bool is_label;  // else an annotation
  std::string_view key;
};
constexpr GuardedKey kGuardedKeys[] = {
    {true, kShardSetLabel},
    {true, kRetainedLabel},
    {true, kOperatorShardLabel},
    {false, kDeletionTimestampAnnotation},
    {false, kDeletionDeadlineAnnotation},
    {false, kOperatorDeletionDeadlineAnnotation},
    {false, kDrainedAtAnnotation},
    {false, kDrainingSinceAnnotation},
};

// "label operator.prometheus.io/shard from \"1\" to \"999\"", one per guarded key that changed.
std::vector<std::string> guardedChanges(const Json& old_object, const Json& object) {
  std::vector<std::string> changes;
  for (const auto& guarded : kGuardedKeys) {
    const std::string* before =
        guarded.is_label ? label(old_object, guarded.key) : annotation(old_object, guarded.key);
    const std::string* after =
        guarded.is_label ? label(object, guarded.key) : annotation(object, guarded.key);
    if (before == nullptr && after == nullptr) continue;
    if (before != nullptr && after != nullptr && *before == *after) continue;
    changes.push_back(fmt::format("{} {} from {} to {}", guarded.is_label ? "label" : "annotation",
                                  guarded.key, valueText(before), valueText(after)));
  }
  return changes;
}
}  // namespace

namespace detail {

const LiveRead& Judgement::target() {
  if (!target_) {
    target_ = target_kind_
                  ? live_.target(request_.ns, *target_kind_, shard_set_.spec.target_ref.name)
                  : LiveRead::failed(
                        fmt::format("targetRef.kind \"{}\" is not Prometheus or PrometheusAgent",
                                    shard_set_.spec.target_ref.kind));
  }
  return *target_;
}

// The garbage collector and the namespace controller clean up after a deleted target or
// namespace; blocking them would leave the deletion hanging.
std::optional<Verdict> Judgement::cleanup() {
  if (!config_.cleanupUser(request_.user.username)) return std::nullopt;
  if (target_kind_) {
    const LiveRead& t = target();
    if (t.state == LiveRead::State::Absent) {
      return allow(kAllowCleanup, fmt::format("{} is gone", verdict_.target));
    }
    if (t.state == LiveRead::State::Found && k8s::meta::beingDeleted(t.object)) {
      return allow(kAllowCleanup, fmt::format("{} is being deleted", verdict_.target));
    }
  }
  return namespaceCleanup();
}

std::optional<Verdict> Judgement::namespaceCleanup() {
  if (!namespace_) namespace_ = live_.namespaceObject(request_.ns);
  const LiveRead& ns = *namespace_;
  if (ns.state == LiveRead::State::Found) {
    const bool terminating = k8s::meta::beingDeleted(ns.object) ||
                             ns.object.value("/status/phase"_json_pointer, "") == "Terminating";
    if (terminating) {
      return allow(kAllowCleanup, fmt::format("namespace {} is being deleted", request_.ns));
    }
  } else if (ns.state == LiveRead::State::Failed) {
    return readFailed(fmt::format("namespace {} to tell whether it is being deleted", request_.ns),
                      ns.error);
  }
  return std::nullopt;
}

// After the ShardSet was read: only shardscaler (or the cleanup after a deleted target or
// namespace) changes what the DELETE rules read.
std::optional<Verdict> Judgement::judgeUpdate(const std::vector<std::string>& changes,
                                              bool reattach) {
  if (auto v = cleanup()) return *v;
  if (reattach) {
    return deny(
        kRuleReattach,
        fmt::format("this UPDATE puts {} back on {}, which {}; only shardscaler "
                    "re-attaches retained shards (scale ShardSet {} up instead).",
                    api::kOperatorNameLabel, shardText(), retainedText(), verdict_.shard_set));
  }
  return deny(kRuleGuardedMetadata,
              fmt::format("this UPDATE changes {} of {}, which the guard reads to decide whether "
                          "the StatefulSet may be deleted; only shardscaler changes them (scale "
                          "ShardSet {} instead, or delete the ShardSet to release its shards).",
                          fmt::join(changes, ", "), shardText(), verdict_.shard_set));
}

Verdict Judgement::run() {
  const bool statefulsets = request_.group == "apps" && request_.resource == "statefulsets" &&
                            request_.sub_resource.empty();
  if (!statefulsets ||
      (request_.operation != Operation::Delete && request_.operation != Operation::Update)) {
    return allow(kAllowNotGuarded, "the guard judges only DELETE and UPDATE of StatefulSets");
  }
  name_ = request_.name;
  if (name_.empty()) name_ = k8s::meta::stringAt(subject(), "metadata", "name");
  const bool update = request_.operation == Operation::Update;
  if (!subject().is_object() || (update && !request_.object.is_object())) {
    return deny(kRuleIncompleteReview,
                fmt::format("the {} review of StatefulSet {}/{} carries no {}, so its labels "
                            "cannot be checked.",
                            toString(request_.operation), request_.ns, name_,
                            subject().is_object() ? "object" : "oldObject"));
  }
  const std::string* shard_set_name = label(subject(), api::kShardSetLabel);
  if (shard_set_name == nullptr) {
    return allow(kAllowUnmanaged, "no ShardSet manages this StatefulSet");
  }
  verdict_.shard_set = untrustedText(*shard_set_name);
  const bool retained = label(subject(), api::kRetainedLabel) != nullptr;
  const bool attached = label(subject(), api::kOperatorNameLabel) != nullptr;
  const bool reattach =
      update && retained && !attached && label(request_.object, api::kOperatorNameLabel) != nullptr;
  const std::vector<std::string> changes =
      update ? guardedChanges(subject(), request_.object) : std::vector<std::string>{};
  if (update && !reattach && changes.empty()) {
    return allow(kAllowNoGuardedChange, "the UPDATE changes nothing the guard's rules read");
  }
  if (const std::string* index = label(subject(), api::kOperatorShardLabel)) {
    verdict_.shard_index = planner::parseShardIndex(*index);
  }
  if (const std::string* deadline = deadlineAnnotation()) {
    verdict_.deadline = untrustedText(*deadline);
  }
  if (config_.exempt(request_.user)) {
    return allow(kAllowExempt,
                 fmt::format("user {} is exempt", untrustedText(request_.user.username)));
  }
  if (config_.ownWrite(request_)) {
    return allow(kAllowOwnWrite,
                 fmt::format("shardscaler's own write (field manager {})", request_.field_manager));
  }

  if (!update && retained && config_.cleanupUser(request_.user.username)) {
    if (auto v = collectRetained()) return *v;
  }
  if (auto v = readShardSet(*shard_set_name)) return *v;
  if (update) {
    if (auto v = judgeUpdate(changes, reattach)) return *v;
  }
  if (auto v = cleanup()) return *v;
  // A shard the ShardSet retained is judged by its deadline first: the operator's deadline
  // annotation on it is one shardscaler wrote with the same value.
  if (retained) {
    if (auto v = deleteRetained()) return *v;
  }
  if (auto v = operatorRetention()) return *v;
  if (!retained || attached) {
    if (auto v = deleteActive()) return *v;
  }
  if (retained) return allow(kAllowDeadlinePassed, "the retained shard's deadline has passed");
  return allow(kAllowBeyondShardCount, "the shard's index is beyond the shard count");
}

std::optional<Verdict> Judgement::readShardSet(const std::string& name) {
  const LiveRead shard_set = live_.shardSet(request_.ns, name);
  if (shard_set.state == LiveRead::State::Absent) {
    return allow(
        kAllowShardSetGone,
        fmt::format("ShardSet {} does not exist: the shard is released", verdict_.shard_set));
  }
  if (shard_set.state == LiveRead::State::Failed) {
    return readFailed(fmt::format("ShardSet {}/{}", request_.ns, verdict_.shard_set),
                      shard_set.error);
  }
  auto parsed = api::decodeShardSet(shard_set.object);
  if (!parsed) {
    return deny(
        kRuleReadFailed,
        fmt::format("ShardSet {}/{} cannot be read (it does not decode), so the {} of {} "
                    "is refused.",
                    request_.ns, verdict_.shard_set, toString(request_.operation), shardText()),
        parsed.error().describe());
  }
  shard_set_ = std::move(*parsed);
  target_kind_ = planner::parseTargetKind(shard_set_.spec.target_ref.kind);
  verdict_.target = fmt::format("{} {}", untrustedText(shard_set_.spec.target_ref.kind),
                                untrustedText(shard_set_.spec.target_ref.name));
  return std::nullopt;
}

}  // namespace detail

Verdict decide(const AdmissionRequest& request, LiveObjects& live,
               std::chrono::system_clock::time_point now, const GuardConfig& config) {
  return detail::Judgement(request, live, now, config).run();
}

}  // namespace shardscaler::guard
