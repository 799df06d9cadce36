#include "operator_caches.h"

#include <utility>

#include "shard_naming.h"

namespace shardscaler::emulator {

OperatorCaches::OperatorCaches(const TargetKind& kind, k8s::KubeClient& client,
                               const k8s::Clock& clock, const std::vector<std::string>& namespaces,
                               CacheLag lag)
    : namespaces_(namespaces) {
  std::vector<std::string> scopes = namespaces;
  if (scopes.empty()) scopes.emplace_back();  // "": all namespaces
  for (const auto& ns : scopes) {
    k8s::InformerOptions target_options;
    target_options.ns = ns;
    target_options.transform = k8s::dropManagedFields;
    target_caches_.push_back(makeCache(client, kind.resource, target_options, clock, lag.targets));
    k8s::InformerOptions sts_options;
    sts_options.ns = ns;
    sts_options.label_selector = statefulSetInformerSelector(kind);
    sts_options.transform = k8s::dropManagedFields;
    statefulset_caches_.push_back(
        makeCache(client, k8s::resources::statefulSets(), sts_options, clock, lag.statefulsets));
  }
}

OperatorCaches::~OperatorCaches() { stop(); }

OperatorCaches::Cache OperatorCaches::makeCache(k8s::KubeClient& client,
                                                const k8s::Resource& resource,
                                                const k8s::InformerOptions& options,
                                                const k8s::Clock& clock,
                                                std::chrono::milliseconds lag) {
  Cache cache;
  cache.informer = std::make_unique<k8s::Informer>(client, resource, options, clock);
  auto* informer = cache.informer.get();
  cache.view =
      std::make_unique<LaggedView>(lag, clock, [informer] { return informer->hasSynced(); });
  // Before start(), so that the first list passes through the view as well.
  informer->addEventHandlers(cache.view->sourceHandlers());
  return cache;
}

void OperatorCaches::start() {
  for (auto* caches : {&target_caches_, &statefulset_caches_}) {
    for (auto& cache : *caches) {
      cache.view->start();
      cache.informer->start();
    }
  }
}

bool OperatorCaches::hasSynced() const {
  for (const auto* caches : {&target_caches_, &statefulset_caches_}) {
    for (const auto& cache : *caches) {
      if (!cache.view->hasSynced()) return false;
    }
  }
  return true;
}

void OperatorCaches::addTargetHandlers(const k8s::EventHandlers& handlers) {
  for (auto& cache : target_caches_) cache.view->addEventHandlers(handlers);
}

void OperatorCaches::addStatefulSetHandlers(const k8s::EventHandlers& handlers) {
  for (auto& cache : statefulset_caches_) cache.view->addEventHandlers(handlers);
}

void OperatorCaches::stop() {
  // Views first: an informer thread waiting for room in a full view is released by it.
  for (auto* caches : {&target_caches_, &statefulset_caches_}) {
    for (auto& cache : *caches) cache.view->stop();
  }
  for (auto* caches : {&target_caches_, &statefulset_caches_}) {
    for (auto& cache : *caches) cache.informer->requestStop();
  }
  for (auto* caches : {&target_caches_, &statefulset_caches_}) {
    for (auto& cache : *caches) cache.informer->stop();
  }
}

const LaggedView* OperatorCaches::viewFor(const std::vector<Cache>& caches,
                                          const std::string& ns) const {
  if (namespaces_.empty()) return caches.front().view.get();
  for (std::size_t i = 0; i < namespaces_.size(); ++i) {
    if (namespaces_[i] == ns) return caches[i].view.get();
  }
  return nullptr;
}

k8s::ObjectPtr OperatorCaches::target(const std::string& ns, const std::string& name) const {
  const auto* view = viewFor(target_caches_, ns);
  return view ? view->store().get(ns, name) : nullptr;
}

std::vector<k8s::ObjectPtr> OperatorCaches::targets() const {
  std::vector<k8s::ObjectPtr> out;
  for (const auto& cache : target_caches_) {
    auto objects = cache.view->store().list();
    out.insert(out.end(), objects.begin(), objects.end());
  }
  return out;
}

k8s::ObjectPtr OperatorCaches::statefulSet(const std::string& ns, const std::string& name) const {
  const auto* view = viewFor(statefulset_caches_, ns);
  return view ? view->store().get(ns, name) : nullptr;
}

std::vector<k8s::ObjectPtr> OperatorCaches::statefulSets(const std::string& ns) const {
  const auto* view = viewFor(statefulset_caches_, ns);
  return view ? view->store().listNamespace(ns) : std::vector<k8s::ObjectPtr>{};
}

}  // namespace shardscaler::emulator
