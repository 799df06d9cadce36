// The apiVersion of a target kind, from the REST resource the planner names for it. Private to
// test_objects: a target and its shards' owner references say it alike.
#pragma once

#include <string>

#include "shardscaler/retention/naming.h"

namespace shardscaler::test_objects {

inline std::string targetApiVersion(retention::TargetKind kind) {
  const auto resource = retention::targetResource(kind);
  return resource.group + "/" + resource.version;
}

}  // namespace shardscaler::test_objects
