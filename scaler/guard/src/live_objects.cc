#include "shardscaler/guard/live_objects.h"

#include "guard_resources.h"

namespace shardscaler::guard {
namespace {

LiveRead toLiveRead(const k8s::Result<k8s::Json>& result) {
  if (result) return LiveRead::found(*result);
  if (result.error().is(k8s::ErrorKind::NotFound)) return LiveRead::absent();
  return LiveRead::failed(result.error().describe());
}

}  // namespace

LiveRead KubeLiveObjects::shardSet(const std::string& ns, const std::string& name) {
  return toLiveRead(client_.get(api::shardSets(), ns, name));
}

LiveRead KubeLiveObjects::target(const std::string& ns, planner::TargetKind kind,
                                 const std::string& name) {
  return toLiveRead(client_.get(planner::targetResource(kind), ns, name));
}

LiveRead KubeLiveObjects::namespaceObject(const std::string& name) {
  return toLiveRead(client_.get(k8s::resources::namespaces(), "", name));
}

}  // namespace shardscaler::guard
