// ShardSet.status as written to the status subresource: the planner's part, the ingestion
// monitor's part, and what went wrong applying the plan. Builds JSON; never writes it.
#pragma once

#include <optional>
#include <string>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/retention/planner.h"
#include "shardscaler/scaler/ingestion_source.h"

namespace shardscaler::scaler {

// spec.ingestion of a ShardSet, or nullopt when it has none (or none that can be used: the
// problem is then in *problem).
std::optional<IngestionTarget> ingestionTarget(const k8s::Json& shard_set,
                                               std::string* problem = nullptr);

// apply_failure: "<action>: <error>" when a write of the plan failed for a reason that
// planning again cannot fix (Forbidden, Invalid, ...); it becomes Degraded=True/ApplyFailed.
k8s::Json shardSetStatusJson(const retention::Plan& plan, const k8s::Json& shard_set,
                             const std::optional<IngestionSnapshot>& ingestion,
                             const std::optional<std::string>& apply_failure,
                             k8s::Clock::SystemTime now);

}  // namespace shardscaler::scaler
