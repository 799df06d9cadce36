// The guard's rule for the targets: a claimed Prometheus or PrometheusAgent's shard count is the
// ShardSet's to set. An UPDATE of the target (or of its scale subresource) that changes
// spec.shards is refused unless shardscaler sends it, so an HPA aimed at the target, `kubectl
// scale prometheus/...` or a GitOps tool that declares spec.shards never lowers the count under
// the operator; the operator then has nothing to delete. Pure but for the reads it asks of
// LiveObjects (only for a count change, never for the operator's own updates); never throws.
#pragma once

#include <string_view>

#include "shardscaler/guard/admission_review.h"
#include "shardscaler/guard/decision.h"
#include "shardscaler/guard/guard_config.h"
#include "shardscaler/guard/live_objects.h"

namespace shardscaler::guard {

// Someone but shardscaler changed the shard count of a target a ShardSet claims.
inline constexpr std::string_view kRuleShardCountOwnedByShardSet = "ShardCountOwnedByShardSet";

// True for a review of prometheuses or prometheusagents (monitoring.coreos.com), the object itself
// or its scale subresource: what decideTargetUpdate judges.
bool isTargetReview(const AdmissionRequest& request);

// Allows every review but an UPDATE that changes the count of a claimed target, by anyone neither
// exempt nor shardscaler itself (its user and field manager). The claim is the target's
// shardscaler.io/claimed-by annotation, and the ShardSet it names must exist and point at the
// target: a claim left behind by a ShardSet deleted while shardscaler was down refuses nothing.
// A failed read refuses, as every guard rule does on doubt.
Verdict decideTargetUpdate(const AdmissionRequest& request, LiveObjects& live,
                           const GuardConfig& config);

}  // namespace shardscaler::guard
