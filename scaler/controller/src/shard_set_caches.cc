#include "shard_set_caches.h"

#include <algorithm>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/controller/cache_fields.h"
#include "shardscaler/planner/naming.h"

#include "object_fields.h"
#include "shard_set_event_mapper.h"

namespace shardscaler::controller {

using k8s::Json;
using k8s::ObjectPtr;

std::string targetIndexValue(std::string_view ns, std::string_view kind, std::string_view name) {
  std::string value(ns);
  value.append("/").append(kind).append("/").append(name);
  return value;
}

ShardSetCaches::ShardSetCaches(k8s::KubeClient& client, const k8s::Clock& clock,
                               telemetry::Metrics* metrics, Options options)
    : client_(client), clock_(clock), metrics_(metrics), options_(std::move(options)) {}

const k8s::Informer* ShardSetCaches::add(const k8s::Resource& resource, const std::string& ns,
                                         k8s::InformerOptions opts, k8s::EventHandlers handlers,
                                         std::vector<NamedInformer>& into) {
  opts.ns = ns;
  opts.resync_period = options_.resync_period;
  if (metrics_ != nullptr) {
    opts.on_watch_restart = [metrics = metrics_, name = resource.resource](std::string_view why) {
      metrics->incWatchRestart(name, why);
    };
  }
  auto informer = std::make_unique<k8s::Informer>(client_, resource, std::move(opts), clock_);
  informer->addEventHandlers(std::move(handlers));
  into.push_back({resource.describe() + (ns.empty() ? "" : " in " + ns), std::move(informer)});
  return into.back().informer.get();
}

void ShardSetCaches::start(ShardSetEventMapper& mapper) {
  const auto shard_set_fields = shardSetCacheFields();
  const auto target_fields = targetCacheFields();
  const auto stateful_set_fields = statefulSetCacheFields();
  for (const std::string& ns : options_.namespaces) {
    add(api::shardSets(), ns,
        {.fields = shard_set_fields,
         .indexers = {{kTargetIndex, ShardSetEventMapper::shardSetTargets}}},
        mapper.shardSetHandlers(), shard_sets_);
    NamespaceCaches caches{.ns = ns};
    caches.prometheuses =
        add(planner::targetResource(planner::TargetKind::Prometheus), ns, {.fields = target_fields},
            mapper.targetHandlers(planner::TargetKind::Prometheus), others_);
    caches.prometheus_agents =
        add(planner::targetResource(planner::TargetKind::PrometheusAgent), ns,
            {.fields = target_fields}, mapper.targetHandlers(planner::TargetKind::PrometheusAgent),
            others_);
    // Attached and retained shards both keep the shard label; only the name label moves.
    caches.stateful_sets = add(k8s::resources::statefulSets(), ns,
                               {.label_selector = std::string(api::kOperatorShardLabel),
                                .metadata_only = true,
                                .fields = stateful_set_fields,
                                .indexers = {{kAttachedIndex, ShardSetEventMapper::attachedTo},
                                             {kDetachedIndex, ShardSetEventMapper::detachedFor}}},
                               mapper.statefulSetHandlers(), others_);
    namespaces_.push_back(caches);
  }
  for (const NamedInformer* i : all()) i->informer->start();
}

void ShardSetCaches::stop() {
  for (const NamedInformer* i : all()) i->informer->requestStop();
  for (const NamedInformer* i : all()) i->informer->stop();
}

std::vector<const ShardSetCaches::NamedInformer*> ShardSetCaches::all() const {
  std::vector<const NamedInformer*> out;
  for (const auto* list : {&shard_sets_, &others_}) {
    for (const auto& i : *list) out.push_back(&i);
  }
  return out;
}

bool ShardSetCaches::hasSynced(std::string* why) const {
  std::vector<std::string> pending;
  for (const NamedInformer* i : all()) {
    if (!i->informer->hasSynced()) pending.push_back(i->description);
  }
  if (why != nullptr && !pending.empty()) {
    *why = "informers not synced:";
    for (const auto& p : pending) *why += " " + p;
  }
  return pending.empty() && started();
}

bool ShardSetCaches::waitForSync(std::chrono::nanoseconds timeout) const {
  const auto deadline = clock_.deadlineAfter(timeout);
  for (const NamedInformer* i : all()) {
    auto left = deadline - clock_.monotonicNow();
    if (!i->informer->waitForSync(std::max<std::chrono::nanoseconds>(left, {}))) return false;
  }
  return true;
}

ObjectPtr ShardSetCaches::shardSet(const std::string& key) const {
  for (const auto& i : shard_sets_) {
    if (ObjectPtr object = i.informer->store().get(key)) return object;
  }
  return nullptr;
}

std::vector<ObjectPtr> ShardSetCaches::shardSetsNaming(const std::string& target) const {
  std::vector<ObjectPtr> out;
  for (const auto& i : shard_sets_) {
    for (ObjectPtr& object : i.informer->store().byIndex(kTargetIndex, target)) {
      out.push_back(std::move(object));
    }
  }
  return out;
}

std::optional<ShardSetCaches::TargetCaches> ShardSetCaches::forTarget(
    const api::ShardSet& shard_set) const {
  auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
  if (!kind || shard_set.spec.target_ref.name.empty()) return std::nullopt;
  auto caches = std::ranges::find_if(
      namespaces_, [&](const NamespaceCaches& c) { return c.ns.empty() || c.ns == shard_set.ns; });
  if (caches == namespaces_.end()) return std::nullopt;
  TargetCaches found{
      .kind = *kind,
      .targets = *kind == planner::TargetKind::Prometheus ? caches->prometheuses
                                                          : caches->prometheus_agents,
      .shards = caches->stateful_sets,
  };
  if (!found.targets->hasSynced() || !found.shards->hasSynced()) return std::nullopt;
  return found;
}

bool ShardSetCaches::showUnlabelledShards(const api::ShardSet& shard_set) const {
  if (namespaces_.empty()) return true;  // a dry run: no caches
  const std::string value = shard_set.ns + "/" + shard_set.spec.target_ref.name;
  for (const NamespaceCaches& caches : namespaces_) {
    const k8s::Informer* informer = caches.stateful_sets;
    if (!informer->hasSynced()) return true;
    for (const ObjectPtr& sts : informer->store().byIndex(kAttachedIndex, value)) {
      const Json& labels = field(*sts, "metadata", "labels");
      auto guard = labels.find(api::kShardSetLabel);
      if (guard == labels.end() || *guard != shard_set.name) return true;
    }
  }
  return false;
}

bool ShardSetCaches::showAFirstClaim(const api::ShardSet& shard_set) const {
  auto caches = forTarget(shard_set);
  if (!caches) return false;
  const ObjectPtr target =
      caches->targets->store().get(shard_set.ns, shard_set.spec.target_ref.name);
  if (!target) return false;
  const Json& annotations = field(*target, "metadata", "annotations");
  if (annotations.is_object() && annotations.contains(api::kClaimedByAnnotation)) {
    return false;
  }
  return caches->shards->store()
      .byIndex(kDetachedIndex, k8s::objectKey(shard_set.ns, shard_set.name))
      .empty();
}

}  // namespace shardscaler::controller
