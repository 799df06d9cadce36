// The operator's naming and selection rules for a target's shards: StatefulSet names, label
// sets, the informer's selector, the scale selector. Pure functions of the target object.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "target_kind.h"

namespace shardscaler::emulator {

using Json = nlohmann::json;
using Labels = std::map<std::string, std::string>;

// spec.shards normalized as shardsNumber() does: absent, null or <= 1 means 1.
int shardsNumber(const Json& target);
// spec.shards as the status reports it: ptr.Deref(spec.shards, 1), not normalized.
long long specShardsOrOne(const Json& target);
// spec.replicas: absent means 1, negative means 1, 0 stays 0.
int replicasNumber(const Json& target);

// <prefix>-<name> for shard 0, <prefix>-<name>-shard-<i> otherwise.
std::string statefulSetName(const TargetKind& kind, const std::string& target_name, int shard);
std::vector<std::string> expectedStatefulSetNames(const TargetKind& kind, const Json& target);
// The shard index a StatefulSet name encodes for this target, if it is one of its names.
std::optional<int> shardOfStatefulSetName(const TargetKind& kind, const std::string& target_name,
                                          const std::string& statefulset_name);
// <prefix>-<name>: the config Secret shared by all shards.
std::string configSecretName(const TargetKind& kind, const std::string& target_name);

// LabelSelectorForStatefulSets(mode): what the operator's StatefulSet informer lists and watches.
std::string statefulSetInformerSelector(const TargetKind& kind);
// makeSelectorLabels(name): the pod selector without the shard label.
Labels selectorLabels(const TargetKind& kind, const std::string& target_name);
// metav1 selector string of selectorLabels (keys sorted), as written to status.selector.
std::string selectorString(const Labels& labels);
// The labels cleanup lists by: operator.prometheus.io/name=<name>, operator.prometheus.io/mode.
Labels cleanupSelector(const TargetKind& kind, const std::string& target_name);

// object[field] when it is an object, else an empty object (never throws on null or absence).
const Json& objectField(const Json& object, const char* field);

// metadata.labels / metadata.annotations as a map (non-string values are skipped).
Labels stringMap(const Json& object, const char* field);
bool matchesLabels(const Json& object, const Labels& selector);

// The controller owner reference (WithManagingOwner) and a plain one (WithOwner).
Json controllerOwnerReference(const TargetKind& kind, const Json& target);
Json ownerReference(const TargetKind& kind, const Json& target);

// isManagedByController: the object's controller-id annotation equals the emulator's.
bool managedByController(const Json& object, const std::string& controller_id);
bool deletionInProgress(const Json& object);

}  // namespace shardscaler::emulator
