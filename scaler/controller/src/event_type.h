// The planner's Event types as Kubernetes Event types: the planner links no k8s-client (it does no
// I/O), so the controller maps one to the other where it records an Event.
#pragma once

#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/planner/reasons.h"

namespace shardscaler::controller {

inline k8s::EventType eventTypeOf(planner::EventType type) {
  return type == planner::EventType::Warning ? k8s::EventType::Warning : k8s::EventType::Normal;
}

}  // namespace shardscaler::controller
