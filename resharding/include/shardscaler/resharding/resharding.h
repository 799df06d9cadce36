// The re-sharding a ShardSet asks for (spec.resharding), carried out on its target's scrape
// classes: what they must hold after the next target write, the Resharding condition, and its
// Events. Pure and level-triggered: the table in force is read back from the target itself.
// It never writes low-churn rules it cannot prove safe for every object the target selects: a
// target it cannot cover faithfully keeps the operator's sharding.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/resharding/low_churn_rules.h"
#include "shardscaler/resharding/scrape_objects.h"

namespace shardscaler::resharding {

enum class Mode { Operator, LowChurn };

// While low-churn rules are in force, the scrape objects are read again at least this often, so
// that a new object that shards itself is seen (and left to its rules) within it.
inline constexpr std::chrono::seconds kScrapeObjectsMaxAge{60};

// Resharding condition reasons.
inline constexpr std::string_view kReasonLowChurn = "LowChurn";                  // True
inline constexpr std::string_view kReasonOperatorSharding = "OperatorSharding";  // False
// False, LowChurn asked for and refused: the operator shards by zone first.
inline constexpr std::string_view kReasonTopologySharding = "TopologySharding";
// False, refused: a selected ScrapeConfig shards itself in a way scrape-class rules would break.
inline constexpr std::string_view kReasonOwnShardingRules = "OwnShardingRules";
// False: two default scrape classes (the operator refuses the target's configuration).
inline constexpr std::string_view kReasonMultipleDefaultClasses = "MultipleDefaultScrapeClasses";
// False: LowChurn asked for, not applied yet: the selected scrape objects could not be read.
inline constexpr std::string_view kReasonScrapeObjectsUnread = "ScrapeObjectsUnread";
// Event reasons.
inline constexpr std::string_view kEventLowChurnEnabled = "LowChurnEnabled";
inline constexpr std::string_view kEventLowChurnDisabled = "LowChurnDisabled";
inline constexpr std::string_view kEventLowChurnRulesReset = "LowChurnRulesReset";

struct ReshardingInput {
  Mode mode = Mode::Operator;
  TargetScrapeSpec target;
  // The target's spec.shards as the operator reads it, now and after the write this plan makes
  // (the same unless the write changes spec.shards).
  int32_t current_shards = 1;
  int32_t shards = 1;
  int64_t max_shards = 50;  // the bucket count of a new table (bucketCount)
  // The scrape objects the target selects; nullopt when they were not read (a plan from the
  // caches, or a read that failed: objects_error says why).
  std::optional<std::vector<ScrapeObject>> objects;
  std::string objects_error;
  // The Resharding condition as last written (reason and message), for a plan made without the
  // objects, which cannot tell coverage.
  std::string previous_reason;
  std::string previous_message;
  // The ShardSet lets go of the target: the operator's sharding is restored.
  bool release = false;
};

struct ReshardingNotice {
  bool warning = false;
  std::string reason;
  std::string message;
};

struct ReshardingOutcome {
  // spec.scrapeClasses to write (null: remove the field); nullopt: leave them as they are.
  std::optional<nlohmann::json> scrape_classes;
  // After that write, shardscaler's rules are in force with this table.
  std::optional<LowChurnRules> rules;
  // The objects are needed to decide (a plan from the caches found something to change).
  bool needs_objects = false;
  // The condition is worth stating: LowChurn is asked for, or rules of shardscaler's are (or
  // were just) on the target.
  bool relevant = false;
  bool condition = false;
  std::string reason;
  std::string message;
  std::vector<ReshardingNotice> events;
  std::string summary;  // one line for `shardscaler plan`
};

ReshardingOutcome planResharding(const ReshardingInput& input);

}  // namespace shardscaler::resharding
