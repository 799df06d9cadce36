// The controller's informer caches: ShardSets, targets and their StatefulSets, one set per watched
// namespace, and the lookups the event mapper and the reader make in them. It never writes.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::controller {

class ShardSetEventMapper;

// Indexes of the caches. ShardSets by the targets they name ("<namespace>/<Kind>/<name>"):
// spec.targetRef, and the target they are bound to while they still have to release it.
// StatefulSets by the target the operator's name label attaches them to ("<namespace>/<name>"),
// and, for shards without that label (retained ones), by the ShardSet whose guard label they
// carry ("<namespace>/<name>").
inline constexpr const char* kTargetIndex = "target";
inline constexpr const char* kAttachedIndex = "attached";
inline constexpr const char* kDetachedIndex = "detached";

// "<namespace>/<Kind>/<name>", the value kTargetIndex files a ShardSet under.
std::string targetIndexValue(std::string_view ns, std::string_view kind, std::string_view name);

// Thread-safety: start/stop from one thread; every other method from any thread once started.
class ShardSetCaches {
 public:
  struct Options {
    std::vector<std::string> namespaces;  // "" = all namespaces
    std::chrono::milliseconds resync_period = std::chrono::minutes(10);
  };
  // metrics may be null.
  ShardSetCaches(k8s::KubeClient& client, const k8s::Clock& clock, telemetry::Metrics* metrics,
                 Options options);

  // Creates every informer with the mapper's handlers and starts them.
  void start(ShardSetEventMapper& mapper);
  // Asks every informer to stop at once (each watch takes about a second), then waits for them.
  void stop();

  // True once every informer has listed once. When false, *why names those that have not.
  bool hasSynced(std::string* why = nullptr) const;
  bool waitForSync(std::chrono::nanoseconds timeout) const;
  bool started() const { return !shard_sets_.empty(); }

  // The ShardSet by key ("namespace/name"), or null.
  k8s::ObjectPtr shardSet(const std::string& key) const;
  // The ShardSets filed under `target` (targetIndexValue).
  std::vector<k8s::ObjectPtr> shardSetsNaming(const std::string& target) const;

  // The caches a plan of `shard_set` reads: the informer of its target's kind and the
  // StatefulSet one, both of its namespace and both synced. nullopt: an unknown target kind or no
  // target name, no caches (a dry run) or none for its namespace, or one not synced yet.
  struct TargetCaches {
    planner::TargetKind kind;
    const k8s::Informer* targets;
    const k8s::Informer* shards;
  };
  std::optional<TargetCaches> forTarget(const api::ShardSet& shard_set) const;
  // Whether the StatefulSet caches hold a shard attached to the ShardSet's target without its
  // guard label (or cannot tell: not started, or not synced yet).
  bool showUnlabelledShards(const api::ShardSet& shard_set) const;
  // Whether the caches (synced) show the ShardSet's target claimed by no ShardSet, and no
  // detached shard under this ShardSet's guard label: what a first claim finds.
  bool showAFirstClaim(const api::ShardSet& shard_set) const;

 private:
  struct NamedInformer {
    std::string description;  // for /readyz: "shardsets.shardscaler.io/v1alpha1 in monitoring"
    std::unique_ptr<k8s::Informer> informer;
  };
  // One namespace's target and StatefulSet informers ("" = all namespaces).
  struct NamespaceCaches {
    std::string ns;
    const k8s::Informer* prometheuses = nullptr;
    const k8s::Informer* prometheus_agents = nullptr;
    const k8s::Informer* stateful_sets = nullptr;
  };

  // opts: what the informer selects and keeps; namespace, resync and metrics are added here.
  const k8s::Informer* add(const k8s::Resource& resource, const std::string& ns,
                           k8s::InformerOptions opts, k8s::EventHandlers handlers,
                           std::vector<NamedInformer>& into);
  std::vector<const NamedInformer*> all() const;

  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  telemetry::Metrics* metrics_;
  const Options options_;
  std::vector<NamedInformer> shard_sets_;  // one per namespace
  std::vector<NamedInformer> others_;
  std::vector<NamespaceCaches> namespaces_;
};

}  // namespace shardscaler::controller
