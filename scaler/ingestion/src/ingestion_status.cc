#include "shardscaler/ingestion/ingestion_status.h"

namespace shardscaler::ingestion {

std::optional<planner::Condition> ingestionCondition(
    std::span<const planner::Condition> previous, bool has_ingestion,
    const std::string& spec_problem, const std::optional<IngestionSnapshot>& snapshot,
    int64_t observed_generation, std::chrono::system_clock::time_point now) {
  if (!has_ingestion) return std::nullopt;
  auto make = [&](std::optional<bool> status, std::string_view reason, std::string message) {
    const std::string_view value =
        !status ? api::kConditionUnknown : (*status ? api::kConditionTrue : api::kConditionFalse);
    return planner::makeCondition(previous, kConditionIngestionAvailable, value, reason,
                                  std::move(message), observed_generation, now);
  };
  if (!spec_problem.empty()) return make(false, kReasonInvalidIngestionSpec, spec_problem);
  if (!snapshot) {
    return make(std::nullopt, kReasonAwaitingFirstQuery, "no ingestion query has finished yet");
  }
  if (!snapshot->error.empty()) {
    const std::string_view reason =
        snapshot->error_reason.empty() ? std::string_view("QueryFailed") : snapshot->error_reason;
    return make(false, reason, snapshot->error);
  }
  return make(true, kReasonRatesAvailable,
              "the last query returned the rates of " + std::to_string(snapshot->per_shard.size()) +
                  " shard(s)");
}

std::vector<planner::Event> ingestionEvents(const planner::Condition* previous,
                                            const planner::Condition& current) {
  const bool was_false = previous != nullptr && previous->status == api::kConditionFalse;
  if (current.status == api::kConditionFalse &&
      (!was_false || previous->reason != current.reason)) {
    return {{planner::EventType::Warning, std::string(kEventIngestionUnavailable),
             current.reason + ": " + current.message}};
  }
  if (current.status == api::kConditionTrue && was_false) {
    return {{planner::EventType::Normal, std::string(kEventIngestionRecovered),
             "ingestion rates available again after " + previous->reason}};
  }
  return {};
}

}  // namespace shardscaler::ingestion
