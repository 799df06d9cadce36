// The planner's world from the objects of test_objects (as JSON, so the readers are exercised too)
// and a compact rendering of plans for table-driven tests. Test-only; no I/O, no clock.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/planner.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

namespace shardscaler::planner::testing {

using Json = nlohmann::json;
using std::chrono::system_clock;

using test_objects::attachedShard;
using test_objects::attachedShards;
using test_objects::fixedNow;
using test_objects::kNamespace;
using test_objects::kTargetUid;
using test_objects::pausedBy;
using test_objects::retainedShard;
using test_objects::shardName;
using test_objects::shardSetJson;
using test_objects::targetJson;

inline Json retainPolicy(const std::string& when, const std::string& period = "") {
  Json p{{"shardRetentionPolicy", {{"whenScaled", when}}}};
  if (!period.empty()) p["shardRetentionPolicy"]["retain"] = {{"retentionPeriod", period}};
  return p;
}

inline Json withAnnotation(Json object, const std::string& key, const Json& value) {
  object["metadata"]["annotations"][key] = value;
  return object;
}

inline std::vector<Json> operator+(std::vector<Json> a, const std::vector<Json>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct World {
  Json shard_set;
  std::optional<Json> target;
  std::vector<Json> stateful_sets;
  system_clock::time_point now = fixedNow();
  // The admission guard is enforced (most tables); false: the fallback's gates apply.
  bool guarded = true;
  std::chrono::nanoseconds settle = std::chrono::seconds(10);
  PlanPurpose purpose = PlanPurpose::Converge;
  bool hold = false;
  std::set<std::string, std::less<>> reattach_refused;
  std::optional<bool> claim_holder_exists;
  std::map<std::string, DrainReading, std::less<>> drain_readings;
  // The tables of the plain transitions (§3) describe a ShardSet without a drain: one that has no
  // drain fields opts out (drain.enabled: false) unless this is set, as the product's default.
  bool drain_by_default = false;
  std::optional<std::vector<resharding::ScrapeObject>> scrape_objects;
  std::chrono::nanoseconds reload_floor = std::chrono::minutes(3);  // --drain-reload-floor
  TransitionSafety safety() const {
    return {.guard_enforced = guarded,
            .settle_time = settle,
            .pause_ack_timeout = std::chrono::seconds(30),
            .reload_floor = reload_floor};
  }

  PlanInput input() const;
};

// "claim", "label 2", "unlabel 2", "pause", "detach 3", "reattach 2", "update shards=3 unpause",
// "update unpause", "update clear-paused-by", "update release-claim", "delete 4".
std::string step(const Action& action);
std::vector<std::string> steps(const Plan& plan);
// The plan's action of that type (and shard index, when given); throws when there is none.
const Action& only(const Plan& plan, ActionType type, int index = -1);
const Condition& condition(const Plan& plan, std::string_view type);
std::string rfc3339(system_clock::time_point t);

}  // namespace shardscaler::planner::testing
