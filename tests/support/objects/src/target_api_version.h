// The apiVersion of a target kind, from the REST resource the planner names for it. Private to
// test_objects: a target and its shards' owner references say it alike.
#pragma once

#include <string>

#include "shardscaler/planner/naming.h"

namespace shardscaler::test_objects {

inline std::string targetApiVersion(planner::TargetKind kind) {
  const auto resource = planner::targetResource(kind);
  return resource.group + "/" + resource.version;
}

}  // namespace shardscaler::test_objects
