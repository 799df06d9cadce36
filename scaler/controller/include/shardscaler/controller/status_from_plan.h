// ShardSet.status as written to the status subresource: the planner's part, the ingestion
// monitor's part, and what went wrong applying the plan. Builds JSON; never writes it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::controller {

// spec.ingestion of a ShardSet (with spec.minShards/maxShards for the recommendation), or
// nullopt when it has none (or none that can be used: the problem is then in *problem).
// IngestionTarget::zones is left unset: it comes from the target, which the caller has.
std::optional<ingestion::IngestionTarget> ingestionTarget(const api::ShardSet& shard_set,
                                                          std::string* problem = nullptr);

// apply_failure: "<action>: <error>" when a write of the plan failed for a reason that
// planning again cannot fix (Forbidden, Invalid, ...); it becomes Degraded=True/ApplyFailed.
// With spec.ingestion: status.ingestion and status.recommendedShards from the snapshot, and the
// IngestionAvailable condition (ingestion_status.h), whose transition Events are appended to
// *events when given.
k8s::Json shardSetStatusJson(const planner::Plan& plan, const api::ShardSet& shard_set,
                             const std::optional<ingestion::IngestionSnapshot>& ingestion,
                             const std::optional<std::string>& apply_failure,
                             k8s::Clock::SystemTime now,
                             std::vector<planner::Event>* events = nullptr);

}  // namespace shardscaler::controller
