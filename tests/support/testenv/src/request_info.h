// What a request to kube-apiserver asks, read from its method and target as the API server's
// RequestInfoFactory reads it: the Kubernetes verb, resource, name. Pure; never sees a body.
#pragma once

#include <string>
#include <string_view>

namespace shardscaler::testenv::control_plane_detail {

struct RequestInfo {
  // get | list | watch | create | update | patch | delete | deletecollection for resource
  // requests; the lower-cased HTTP method ("get", "post", ...) for others (/version, /readyz).
  std::string verb;
  std::string path;  // the target without its query
  std::string ns;    // "" for cluster-scoped and non-resource requests
  std::string resource;
  std::string subresource;
  std::string name;
  bool resource_request = false;

  bool isWatch() const { return verb == "watch"; }
  // POST, PUT, PATCH, DELETE: what a 409 Conflict can refuse.
  bool isWrite() const;
};

RequestInfo classifyApiRequest(std::string_view method, std::string_view target);

}  // namespace shardscaler::testenv::control_plane_detail
