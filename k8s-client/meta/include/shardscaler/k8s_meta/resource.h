// Names an API resource (group/version/resource) and builds its REST paths.
// Pure value type; it never talks to a server.
#pragma once

#include <string>
#include <string_view>

namespace shardscaler::k8s {

struct Resource {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "statefulsets"
  bool namespaced = true;

  // "/api/v1" or "/apis/apps/v1"
  std::string groupVersionPath() const;
  // Collection path: ns empty => all namespaces (or a cluster-scoped resource).
  std::string collectionPath(std::string_view ns) const;
  // Object path, with an optional subresource ("status", "scale").
  std::string objectPath(std::string_view ns, std::string_view name,
                         std::string_view subresource = {}) const;
  // "statefulsets.apps/v1", for messages.
  std::string describe() const;

  friend bool operator==(const Resource&, const Resource&) = default;
};

namespace resources {
Resource namespaces();
Resource pods();
Resource events();
Resource secrets();
Resource serviceAccounts();
Resource statefulSets();
Resource leases();
Resource customResourceDefinitions();
Resource horizontalPodAutoscalers();  // autoscaling/v1: served by every Kubernetes version
}  // namespace resources

}  // namespace shardscaler::k8s
