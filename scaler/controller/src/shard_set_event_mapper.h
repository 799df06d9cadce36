// The controller's event mapping (controller-runtime's handler and predicate packages): which
// watch events queue which ShardSets, what each cache keeps, and how it is indexed. It decides
// *when* a ShardSet is reconciled; it never reads an event's contents into a plan.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shardscaler/controller/expectations.h"
#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/planner/naming.h"

#include "shard_set_caches.h"

namespace shardscaler::controller {

// Thread-safety: the handlers run on the informers' dispatch threads, any number at once.
class ShardSetEventMapper {
 public:
  using Enqueue = std::function<void(const std::string& key)>;
  // expectations tell the echo of a ShardSet's own write from anyone else's change; caches give
  // the ShardSets a target maps to. Both must outlive the mapper.
  ShardSetEventMapper(Expectations& expectations, const ShardSetCaches& caches, Enqueue enqueue);

  k8s::EventHandlers shardSetHandlers();
  k8s::EventHandlers targetHandlers(planner::TargetKind kind);
  k8s::EventHandlers statefulSetHandlers();

  // The indexers behind kTargetIndex, kAttachedIndex and kDetachedIndex.
  static std::vector<std::string> shardSetTargets(const k8s::Json& shard_set);
  static std::vector<std::string> attachedTo(const k8s::Json& stateful_set);
  static std::vector<std::string> detachedFor(const k8s::Json& stateful_set);

 private:
  // Each queues every ShardSet the object maps to but `echo_of`: the ShardSet whose own write
  // the event only echoes (empty: none).
  void enqueueForTarget(const std::string& ns, planner::TargetKind kind,
                        const std::string& target_name, const std::string& echo_of = {});
  void enqueueForStatefulSet(const k8s::Json& stateful_set, const std::string& echo_of = {});
  void enqueueUnlessEcho(const std::string& key, const std::string& echo_of);

  Expectations& expectations_;
  const ShardSetCaches& caches_;
  Enqueue enqueue_;
};

}  // namespace shardscaler::controller
