#include "shard_set_event_mapper.h"

#include <algorithm>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/api/field_names.h"
#include "shardscaler/planner/naming.h"

#include "object_fields.h"

namespace shardscaler::controller {
namespace {

using k8s::Json;
using k8s::ObjectPtr;

// What a watch event must change for a reconcile to be worth it: status-only updates (our own
// status writes, the operator's, the StatefulSet controller's) do not count. An update that
// changes nothing at all is a resync, which does.
bool worthReconciling(const ObjectPtr& old_object, const ObjectPtr& new_object) {
  if (k8s::resourceVersionOf(*old_object) == k8s::resourceVersionOf(*new_object)) return true;
  for (std::string_view f : {"generation", "labels", "annotations", "deletionTimestamp"}) {
    if (field(*old_object, "metadata", f) != field(*new_object, "metadata", f)) return true;
  }
  return false;
}

// Whether a ShardSet changed, in what worthReconciling compares, in its bound-target annotation
// only (the one such field our own writes set).
bool onlyBoundTargetMoved(const Json& old_object, const Json& new_object) {
  for (std::string_view f : {"generation", "labels", "deletionTimestamp"}) {
    if (field(old_object, "metadata", f) != field(new_object, "metadata", f)) return false;
  }
  auto others = [](const Json& object) {
    Json annotations = field(object, "metadata", "annotations");
    if (annotations.is_object()) annotations.erase(std::string(api::kBoundTargetAnnotation));
    return annotations.is_object() && annotations.empty() ? Json() : annotations;
  };
  return others(old_object) == others(new_object);
}

std::optional<planner::TargetKind> kindOfMode(std::string_view mode) {
  if (mode == "server") return planner::TargetKind::Prometheus;
  if (mode == "agent") return planner::TargetKind::PrometheusAgent;
  return std::nullopt;
}

}  // namespace

ShardSetEventMapper::ShardSetEventMapper(Expectations& expectations, const ShardSetCaches& caches,
                                         Enqueue enqueue)
    : expectations_(expectations), caches_(caches), enqueue_(std::move(enqueue)) {}

// The caches decide *when* a ShardSet is reconciled, and what a reconcile that has nothing but
// its status to write plans from (ShardSetReader::observeCached); any other plan reads live.

std::vector<std::string> ShardSetEventMapper::shardSetTargets(const Json& shard_set) {
  std::vector<std::string> values;
  const std::string ns = stringAt(shard_set, "metadata", "namespace");
  const Json& ref = field(shard_set, api::field::kSpec, api::field::kTargetRef);
  if (ref.is_object()) {
    const Json& kind = ref.value(api::field::kKind, Json());
    const Json& name = ref.value(api::field::kName, Json());
    if (kind.is_string() && name.is_string()) {
      values.push_back(targetIndexValue(ns, kind.get<std::string>(), name.get<std::string>()));
    }
  }
  const Json& annotations = field(shard_set, "metadata", "annotations");
  if (annotations.is_object()) {
    auto bound = annotations.find(api::kBoundTargetAnnotation);
    if (bound != annotations.end() && bound->is_string()) {
      std::string value = ns + "/" + bound->get<std::string>();
      if (std::ranges::find(values, value) == values.end()) values.push_back(std::move(value));
    }
  }
  return values;
}

std::vector<std::string> ShardSetEventMapper::attachedTo(const Json& sts) {
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object()) return {};
  auto name = labels.find(api::kOperatorNameLabel);
  if (name == labels.end() || !name->is_string()) return {};
  return {stringAt(sts, "metadata", "namespace") + "/" + name->get<std::string>()};
}

std::vector<std::string> ShardSetEventMapper::detachedFor(const Json& sts) {
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object() || labels.contains(api::kOperatorNameLabel)) return {};
  auto shard_set = labels.find(api::kShardSetLabel);
  if (shard_set == labels.end() || !shard_set->is_string()) return {};
  return {stringAt(sts, "metadata", "namespace") + "/" + shard_set->get<std::string>()};
}

k8s::EventHandlers ShardSetEventMapper::shardSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { enqueue_(k8s::objectKey(*o)); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer =
                expectations_.echoWriter(api::shardSets(), *old_object, *new_object);
            if (!worthReconciling(old_object, new_object)) return;
            const std::string key = k8s::objectKey(*new_object);
            // Our bound-target annotation coming back. It is a merge patch without precondition
            // and no read follows it, so the event may also carry someone else's change (a
            // relist shows only the newest version): then it queues as any event does.
            if (writer == key && onlyBoundTargetMoved(*old_object, *new_object)) return;
            enqueue_(key);
          },
      .on_delete =
          [this](const ObjectPtr& o) {
            expectations_.forgetObject(api::shardSets(), *o);
            enqueue_(k8s::objectKey(*o));
          },
  };
}

// Events that only echo a write of a ShardSet's reconcile do not queue that ShardSet again
// (they still queue every other ShardSet they map to). Every StatefulSet and target write is
// followed by a read in the same reconcile (the next round of planAndApply, or a requeue when
// it stops early) that is at least as new as the write, so anything the echoed version holds,
// even another client's change it folded in, that reconcile reads anyway.
k8s::EventHandlers ShardSetEventMapper::targetHandlers(planner::TargetKind kind) {
  auto on_change = [this, kind](const ObjectPtr& o, const std::string& echo_of) {
    enqueueForTarget(stringAt(*o, "metadata", "namespace"), kind, stringAt(*o, "metadata", "name"),
                     echo_of);
  };
  return k8s::EventHandlers{
      .on_add = [on_change](const ObjectPtr& o) { on_change(o, {}); },
      .on_update =
          [this, kind, on_change](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer =
                expectations_.echoWriter(planner::targetResource(kind), *old_object, *new_object);
            // The operator's pause report counts too: a transition may wait for it.
            if (worthReconciling(old_object, new_object) ||
                old_object->value("status", Json()) != new_object->value("status", Json())) {
              on_change(new_object, writer.value_or(""));
            }
          },
      .on_delete =
          [this, kind, on_change](const ObjectPtr& o) {
            expectations_.forgetObject(planner::targetResource(kind), *o);
            on_change(o, {});
          },
  };
}

k8s::EventHandlers ShardSetEventMapper::statefulSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { enqueueForStatefulSet(*o); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer =
                expectations_.echoWriter(k8s::resources::statefulSets(), *old_object, *new_object);
            if (worthReconciling(old_object, new_object)) {
              // A detach or re-attach moves the StatefulSet between owners' label sets: tell
              // both the old and the new one.
              enqueueForStatefulSet(*old_object, writer.value_or(""));
              enqueueForStatefulSet(*new_object, writer.value_or(""));
            }
          },
      .on_delete =
          [this](const ObjectPtr& o) {
            expectations_.forgetObject(k8s::resources::statefulSets(), *o);
            enqueueForStatefulSet(*o);
          },
  };
}

void ShardSetEventMapper::enqueueUnlessEcho(const std::string& key, const std::string& echo_of) {
  if (key != echo_of) enqueue_(key);
}

void ShardSetEventMapper::enqueueForTarget(const std::string& ns, planner::TargetKind kind,
                                           const std::string& target_name,
                                           const std::string& echo_of) {
  const std::string value = targetIndexValue(ns, planner::toString(kind), target_name);
  for (const ObjectPtr& shard_set : caches_.shardSetsNaming(value)) {
    enqueueUnlessEcho(k8s::objectKey(*shard_set), echo_of);
  }
}

void ShardSetEventMapper::enqueueForStatefulSet(const Json& sts, const std::string& echo_of) {
  const std::string ns = stringAt(sts, "metadata", "namespace");
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object()) return;
  if (auto s = labels.find(api::kShardSetLabel); s != labels.end() && s->is_string()) {
    enqueueUnlessEcho(k8s::objectKey(ns, s->get<std::string>()), echo_of);
  }
  if (auto n = labels.find(api::kOperatorNameLabel); n != labels.end() && n->is_string()) {
    auto mode = labels.find(api::kOperatorModeLabel);
    auto kind = mode != labels.end() && mode->is_string() ? kindOfMode(mode->get<std::string>())
                                                          : std::nullopt;
    for (auto k : {planner::TargetKind::Prometheus, planner::TargetKind::PrometheusAgent}) {
      if (!kind || *kind == k) enqueueForTarget(ns, k, n->get<std::string>(), echo_of);
    }
  }
}

}  // namespace shardscaler::controller
