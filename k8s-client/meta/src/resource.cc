#include "shardscaler/k8s_meta/resource.h"

#include "shardscaler/k8s_meta/url_encoding.h"

namespace shardscaler::k8s {

std::string Resource::groupVersionPath() const {
  if (group.empty()) return "/api/" + version;
  return "/apis/" + group + "/" + version;
}

std::string Resource::collectionPath(std::string_view ns) const {
  std::string path = groupVersionPath();
  if (namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += detail::percentEncode(ns);
  }
  path += "/";
  path += resource;
  return path;
}

std::string Resource::objectPath(std::string_view ns, std::string_view name,
                                 std::string_view subresource) const {
  std::string path = collectionPath(ns);
  path += "/";
  path += detail::percentEncode(name);
  if (!subresource.empty()) {
    path += "/";
    path += subresource;
  }
  return path;
}

std::string Resource::describe() const {
  std::string text = resource;
  if (!group.empty()) text += "." + group;
  text += "/" + version;
  return text;
}

namespace resources {
Resource namespaces() { return {"", "v1", "namespaces", false}; }
Resource pods() { return {"", "v1", "pods", true}; }
Resource events() { return {"", "v1", "events", true}; }
Resource secrets() { return {"", "v1", "secrets", true}; }
Resource serviceAccounts() { return {"", "v1", "serviceaccounts", true}; }
Resource statefulSets() { return {"apps", "v1", "statefulsets", true}; }
Resource leases() { return {"coordination.k8s.io", "v1", "leases", true}; }
Resource customResourceDefinitions() {
  return {"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
}
Resource horizontalPodAutoscalers() {
  return {"autoscaling", "v1", "horizontalpodautoscalers", true};
}
}  // namespace resources

}  // namespace shardscaler::k8s
