#include "shardscaler/guard/decision.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "denial_text.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/retention/condition.h"
#include "shardscaler/retention/deadline.h"
#include "shardscaler/retention/desired_shards.h"
#include "shardscaler/retention/policy.h"
#include "shardscaler/retention/target.h"

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

using detail::failureKind;
using k8s::meta::annotation;
using k8s::meta::label;

// Label and annotation values as a denial message repeats them.
std::string valueText(const std::string* value) {
  if (value == nullptr) return "none";
  return fmt::format("\"{}\"", untrustedText(*value));
}

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

// Everything one decision learns, read at most once each.
class Judgement : private detail::VerdictBuilder {
 public:
  Judgement(const AdmissionRequest& request, LiveObjects& live,
            std::chrono::system_clock::time_point now, const GuardConfig& config)
      : VerdictBuilder(config), request_(request), live_(live), now_(now) {}

  Verdict run();

 private:
  // "StatefulSet monitoring/prometheus-main-shard-3 (shard 3 of Prometheus main)"
  std::string shardText() const {
    std::string text = fmt::format("StatefulSet {}/{}", request_.ns, name_);
    std::string of;
    if (verdict_.shard_index) of = fmt::format("shard {}", *verdict_.shard_index);
    if (!verdict_.target.empty())
      of += fmt::format("{}of {}", of.empty() ? "" : " ", verdict_.target);
    return of.empty() ? text : fmt::format("{} ({})", text, of);
  }
  // shardscaler's deadline of the subject: shardscaler.io/deletion-deadline, else the older name.
  const std::string* deadlineAnnotation() const {
    const std::string* value = annotation(subject(), api::kDeletionDeadlineAnnotation);
    return value != nullptr ? value : annotation(subject(), api::kDeletionTimestampAnnotation);
  }
  std::string retainedText() const {
    const std::string* deadline = deadlineAnnotation();
    const std::string text = fmt::format("is retained by ShardSet {}", verdict_.shard_set);
    if (deadline == nullptr) {
      return fmt::format("{} but has no {} annotation, so it is kept (never delete on doubt)", text,
                         api::kDeletionTimestampAnnotation);
    }
    auto parsed = retention::parseDeletionTimestamp(*deadline);
    if (!parsed) {
      return fmt::format("{} but its {} is unreadable ({}), so it is kept (never delete on doubt)",
                         text, api::kDeletionTimestampAnnotation,
                         untrustedText(parsed.error(), 128));
    }
    if (parsed->isNever()) {
      return fmt::format("{} with no deadline ({} means never)", text, untrustedText(*deadline));
    }
    return fmt::format("{} until {}", text, k8s::formatRfc3339(parsed->time()));
  }

  const Json& subject() const { return request_.old_object; }
  const LiveRead& target();
  // Reads the ShardSet the guard label names into shard_set_; a verdict when that ends it.
  std::optional<Verdict> readShardSet(const std::string& name);
  std::optional<Verdict> cleanup();
  // Whether the namespace is being deleted (its controller and the garbage collector take
  // everything then); the read is made once.
  std::optional<Verdict> namespaceCleanup();
  std::optional<Verdict> collectRetained();
  std::optional<Verdict> deleteRetained();
  // A shard the operator's own retention keeps (an operator.prometheus.io/deletion-deadline that
  // is ahead, never, or unreadable) is not to be deleted by anyone.
  std::optional<Verdict> operatorRetention();
  std::optional<Verdict> deleteDue();
  std::optional<Verdict> deleteActive();
  std::optional<Verdict> deleteAboveTheCount(const std::optional<retention::Target>& target);
  Verdict readFailed(const std::string& what, const std::string& error) {
    return deny(kRuleReadFailed,
                fmt::format("cannot read {} ({}), so the {} of {} is refused until it can be "
                            "checked.",
                            what, failureKind(error), toString(request_.operation), shardText()),
                error);
  }
  std::optional<Verdict> judgeUpdate(const std::vector<std::string>& changes, bool reattach);

  const AdmissionRequest& request_;
  LiveObjects& live_;
  const std::chrono::system_clock::time_point now_;

  std::string name_;
  api::ShardSet shard_set_;
  std::optional<retention::TargetKind> target_kind_;
  std::optional<LiveRead> target_;
  std::optional<LiveRead> namespace_;
};

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

namespace {

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
    const auto target_kind = retention::parseTargetKind(kind);
    return target_kind && inGroup(api_version, retention::targetResource(*target_kind).group);
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
                  shardText(), verdict_.shard_set, how, retention::kReasonRetainedShardsOrphaned));
}

std::optional<Verdict> Judgement::deleteRetained() {
  const std::string* deadline = deadlineAnnotation();
  if (deadline != nullptr) verdict_.deadline = untrustedText(*deadline);
  if (deadline != nullptr) {
    auto parsed = retention::parseDeletionTimestamp(*deadline);
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
  auto drain = retention::resolveDrainPolicy(shard_set_);
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
      retention::parseAnnotationTime(annotation(subject(), kDrainingSinceAnnotation));
  const std::optional<std::chrono::system_clock::time_point> gives_up_at =
      draining_since ? std::optional(drain->givesUpAt(*draining_since)) : std::nullopt;
  if (drain->on_timeout == retention::OnTimeout::Delete && gives_up_at && now_ >= *gives_up_at) {
    return std::nullopt;
  }
  const std::string times_out =
      drain->on_timeout == retention::OnTimeout::Delete && gives_up_at
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
  auto parsed = retention::parseDeletionTimestamp(*deadline);
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
  std::optional<retention::Target> parsed_target;
  if (t.state == LiveRead::State::Failed) return readFailed(verdict_.target, t.error);
  if (t.state == LiveRead::State::Found) {
    auto p = retention::parseTarget(t.object, *target_kind_);
    if (!p) {
      return deny(kRuleReadFailed,
                  fmt::format("cannot read {} (its spec does not decode), so the DELETE of {} is "
                              "refused until it can be checked.",
                              verdict_.target, shardText()),
                  p.error().describe());
    }
    parsed_target = std::move(*p);
  }
  const auto desired = retention::desiredShards(
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
std::optional<Verdict> Judgement::deleteAboveTheCount(const std::optional<retention::Target>& t) {
  if (!t) return std::nullopt;  // no target: nothing runs the shard
  auto policy = retention::resolveRetentionPolicy(shard_set_, *t);
  if (!policy) {
    return deny(
        kRuleActiveShard,
        fmt::format("{} belongs to ShardSet {}, whose retention policy is invalid ({}), so "
                    "it counts as an active shard (never delete on doubt).",
                    shardText(), verdict_.shard_set, untrustedText(policy.error().front().field)),
        policy.error().front().describe());
  }
  auto drain = retention::resolveDrainPolicy(shard_set_);
  if (policy->when_scaled != retention::WhenScaled::Retain && drain && !drain->enabled) {
    return std::nullopt;
  }
  if (policy->when_scaled != retention::WhenScaled::Retain) {
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
    verdict_.shard_index = retention::parseShardIndex(*index);
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
  target_kind_ = retention::parseTargetKind(shard_set_.spec.target_ref.kind);
  verdict_.target = fmt::format("{} {}", untrustedText(shard_set_.spec.target_ref.kind),
                                untrustedText(shard_set_.spec.target_ref.name));
  return std::nullopt;
}

}  // namespace

Verdict decide(const AdmissionRequest& request, LiveObjects& live,
               std::chrono::system_clock::time_point now, const GuardConfig& config) {
  return Judgement(request, live, now, config).run();
}

}  // namespace shardscaler::guard
