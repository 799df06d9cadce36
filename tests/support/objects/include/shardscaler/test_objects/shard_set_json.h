// A ShardSet as a user writes it, as JSON, so that the codec under test reads it. Test-only: no
// I/O; the spec is what the test says, nothing is checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/names.h"

namespace shardscaler::test_objects {

struct ShardSetShape {
  std::string ns{kNamespace};
  std::string name{kShardSetName};
  planner::TargetKind target_kind = planner::TargetKind::Prometheus;
  std::string target_name{kTargetName};
  std::optional<int64_t> generation = 4;  // nullopt: no metadata.generation
};

// spec: targetRef and `shards`, then `spec_patch` merged in (RFC 7386: null removes a field).
nlohmann::json shardSetJson(int64_t shards,
                            const nlohmann::json& spec_patch = nlohmann::json::object(),
                            const ShardSetShape& shape = {});

}  // namespace shardscaler::test_objects
