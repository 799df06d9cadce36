#include "shardscaler/guard/target_decision.h"

#include <cstdint>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "denial_text.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::guard {
namespace {

using Json = nlohmann::json;

std::optional<planner::TargetKind> targetKindOf(const AdmissionRequest& request) {
  for (auto kind : {planner::TargetKind::Prometheus, planner::TargetKind::PrometheusAgent}) {
    const k8s::Resource resource = planner::targetResource(kind);
    if (request.group == resource.group && request.resource == resource.resource) return kind;
  }
  return std::nullopt;
}

// The shard count the operator runs for an object of the review, a target's spec.shards or a
// Scale's spec.replicas (planner::operatorShardCount). nullopt when it is not an integer.
std::optional<int64_t> shardCount(const Json& object, bool scale) {
  const Json* spec = object.is_object() && object.contains("spec") && object["spec"].is_object()
                         ? &object["spec"]
                         : nullptr;
  const char* field = scale ? "replicas" : "shards";
  if (spec == nullptr || !spec->contains(field) || (*spec)[field].is_null()) {
    return planner::operatorShardCount(std::nullopt);
  }
  const Json& value = (*spec)[field];
  if (!value.is_number_integer()) return std::nullopt;
  return planner::operatorShardCount(value.get<int64_t>());
}

std::string countText(std::optional<int64_t> count) {
  return count ? std::to_string(*count) : std::string("a non-integer");
}

class TargetJudgement : private detail::VerdictBuilder {
 public:
  TargetJudgement(const AdmissionRequest& request, LiveObjects& live, const GuardConfig& config,
                  planner::TargetKind kind)
      : VerdictBuilder(config), request_(request), live_(live), kind_(kind) {
    verdict_.target = fmt::format("{} {}", planner::toString(kind), untrustedText(request.name));
  }

  Verdict run();

 private:
  Verdict readFailed(const std::string& what, const std::string& error) {
    return deny(kRuleReadFailed,
                fmt::format("cannot read {} ({}), so this change of the shard count of {} is "
                            "refused until it can be checked.",
                            what, detail::failureKind(error), verdict_.target),
                error);
  }
  // The claim on the target: from the old object itself, or for a Scale (which carries no
  // annotations) from a live read of the target. nullopt: unclaimed or gone.
  std::optional<Verdict> readClaim(std::string& holder);
  std::optional<Verdict> readShardSet(const std::string& holder);

  const AdmissionRequest& request_;
  LiveObjects& live_;
  const planner::TargetKind kind_;
};

Verdict TargetJudgement::run() {
  const bool scale = request_.sub_resource == "scale";
  if (request_.operation != Operation::Update || (!scale && !request_.sub_resource.empty())) {
    return allow(kAllowNotGuarded, "the guard judges only UPDATEs of a target and its scale");
  }
  const std::optional<int64_t> before = shardCount(request_.old_object, scale);
  const std::optional<int64_t> after = shardCount(request_.object, scale);
  if (before && after && *before == *after) {
    return allow(kAllowNoGuardedChange, "the UPDATE leaves the shard count as it is");
  }
  if (config_.ownWrite(request_)) {
    return allow(kAllowOwnWrite,
                 "shardscaler's own write (field manager " + request_.field_manager + ")");
  }
  if (config_.exempt(request_.user)) {
    return allow(kAllowExempt, "user " + untrustedText(request_.user.username) + " is exempt");
  }
  std::string holder;
  if (auto v = readClaim(holder)) return *v;
  if (auto v = readShardSet(holder)) return *v;
  const std::string replicas = after ? std::to_string(*after) : std::string("<n>");
  return deny(kRuleShardCountOwnedByShardSet,
              fmt::format("this UPDATE changes the shard count of {} from {} to {}, which ShardSet "
                          "{} sets (annotation {}); the operator would delete the shards above "
                          "it, and their data with them. Scale the ShardSet instead (kubectl "
                          "scale shardset/{} -n {} --replicas={}), point an HPA at the ShardSet, "
                          "and leave spec.shards out of what GitOps applies.",
                          verdict_.target, countText(before), countText(after), verdict_.shard_set,
                          api::kClaimedByAnnotation, verdict_.shard_set, untrustedText(request_.ns),
                          replicas));
}

std::optional<Verdict> TargetJudgement::readClaim(std::string& holder) {
  Json target = request_.old_object;
  if (request_.sub_resource == "scale") {
    const LiveRead read = live_.target(request_.ns, kind_, request_.name);
    if (read.state == LiveRead::State::Absent) {
      return allow(kAllowUnmanaged, verdict_.target + " does not exist");
    }
    if (read.state == LiveRead::State::Failed) return readFailed(verdict_.target, read.error);
    target = read.object;
  }
  const std::string* claim = k8s::meta::annotation(target, api::kClaimedByAnnotation);
  if (claim == nullptr || claim->empty()) {
    return allow(kAllowUnmanaged, "no ShardSet claims " + verdict_.target);
  }
  holder = *claim;
  verdict_.shard_set = untrustedText(holder);
  return std::nullopt;
}

std::optional<Verdict> TargetJudgement::readShardSet(const std::string& holder) {
  const LiveRead read = live_.shardSet(request_.ns, holder);
  if (read.state == LiveRead::State::Absent) {
    return allow(kAllowShardSetGone,
                 "ShardSet " + verdict_.shard_set + " does not exist: the claim is left over");
  }
  if (read.state == LiveRead::State::Failed) {
    return readFailed("ShardSet " + untrustedText(request_.ns) + "/" + verdict_.shard_set,
                      read.error);
  }
  auto shard_set = api::decodeShardSet(read.object);
  if (!shard_set) {
    return deny(kRuleReadFailed,
                "ShardSet " + verdict_.shard_set +
                    " cannot be read (it does not decode), so this change of the shard count of " +
                    verdict_.target + " is refused.",
                shard_set.error().describe());
  }
  const api::TargetRef& ref = shard_set->spec.target_ref;
  if (planner::parseTargetKind(ref.kind) != kind_ || ref.name != request_.name) {
    return allow(kAllowShardSetGone, "ShardSet " + verdict_.shard_set + " targets another object");
  }
  return std::nullopt;
}

}  // namespace

bool isTargetReview(const AdmissionRequest& request) { return targetKindOf(request).has_value(); }

Verdict decideTargetUpdate(const AdmissionRequest& request, LiveObjects& live,
                           const GuardConfig& config) {
  const auto kind = targetKindOf(request);
  if (!kind) {
    Verdict verdict;
    verdict.reason = kAllowNotGuarded;
    verdict.message = "not a Prometheus or PrometheusAgent";
    return verdict;
  }
  return TargetJudgement(request, live, config, *kind).run();
}

}  // namespace shardscaler::guard
