// The emulated operator's caches for one kind: an informer on the targets and one on the
// StatefulSets its label selector sees, per watched namespace, each read through a LaggedView
// so that the view can trail the API server as an operator's informers do under load.
// It only reads from the API server; it never writes.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lagged_view.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "target_kind.h"

namespace shardscaler::emulator {

struct CacheLag {
  std::chrono::milliseconds statefulsets{0};  // --statefulset-lag
  std::chrono::milliseconds targets{0};       // --target-lag
};

class OperatorCaches {
 public:
  // `namespaces` empty: one informer of each over all namespaces.
  OperatorCaches(const TargetKind& kind, k8s::KubeClient& client, const k8s::Clock& clock,
                 const std::vector<std::string>& namespaces, CacheLag lag);
  ~OperatorCaches();  // stop()
  OperatorCaches(const OperatorCaches&) = delete;
  OperatorCaches& operator=(const OperatorCaches&) = delete;

  void start();
  // Every informer has listed and every view shows what its informer listed.
  bool hasSynced() const;
  // Handlers on the (lagged) views, as Informer::addEventHandlers.
  void addTargetHandlers(const k8s::EventHandlers& handlers);
  void addStatefulSetHandlers(const k8s::EventHandlers& handlers);
  // Stops the views, then all informers together (each waits about a second for its watch).
  void stop();

  // Reads of the views: what the emulated operator believes exists.
  k8s::ObjectPtr target(const std::string& ns, const std::string& name) const;
  std::vector<k8s::ObjectPtr> targets() const;
  k8s::ObjectPtr statefulSet(const std::string& ns, const std::string& name) const;
  std::vector<k8s::ObjectPtr> statefulSets(const std::string& ns) const;

 private:
  // One informer and the view that trails it.
  struct Cache {
    std::unique_ptr<k8s::Informer> informer;
    std::unique_ptr<LaggedView> view;
  };
  static Cache makeCache(k8s::KubeClient& client, const k8s::Resource& resource,
                         const k8s::InformerOptions& options, const k8s::Clock& clock,
                         std::chrono::milliseconds lag);
  const LaggedView* viewFor(const std::vector<Cache>& caches, const std::string& ns) const;

  std::vector<std::string> namespaces_;
  std::vector<Cache> target_caches_;
  std::vector<Cache> statefulset_caches_;
};

}  // namespace shardscaler::emulator
