// The ingestion part of ShardSet.status: the IngestionAvailable condition and the Events of its
// transitions. Pure functions of the ShardSet, the monitor's snapshot and `now`; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/api/condition_types.h"
#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/planner/reasons.h"

namespace shardscaler::ingestion {

// True: the last query returned rates. False: it did not (the reason says why: the
// kReason* of ingestion_result.h, or InvalidIngestionSpec). Unknown: no answer yet.
// Absent when the ShardSet has no spec.ingestion. The shard count never depends on it.
using api::kConditionIngestionAvailable;
inline constexpr std::string_view kReasonRatesAvailable = "RatesAvailable";
inline constexpr std::string_view kReasonAwaitingFirstQuery = "AwaitingFirstQuery";
inline constexpr std::string_view kReasonInvalidIngestionSpec = "InvalidIngestionSpec";

// Events: Warning when the condition becomes False (or stays False for another reason),
// Normal when it becomes True again after being False.
inline constexpr std::string_view kEventIngestionUnavailable = "IngestionUnavailable";
inline constexpr std::string_view kEventIngestionRecovered = "IngestionRecovered";

// What ShardSet.spec.ingestion and the monitor say, as the condition to publish.
// has_ingestion: spec.ingestion is present; spec_problem: why it cannot be used ("" if it can).
std::optional<planner::Condition> ingestionCondition(
    std::span<const planner::Condition> previous, bool has_ingestion,
    const std::string& spec_problem, const std::optional<IngestionSnapshot>& snapshot,
    int64_t observed_generation, std::chrono::system_clock::time_point now);

// The Events of going from `previous` (nullptr: none) to `current`.
std::vector<planner::Event> ingestionEvents(const planner::Condition* previous,
                                            const planner::Condition& current);

}  // namespace shardscaler::ingestion
