// What an HTTP request to the aggregated API asks for (discovery, OpenAPI, or a metric of a
// namespace), the authorization attributes the API server would give it, and the metav1.Status
// of a refusal. Pure; must never route a path it does not fully understand to a handler.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/label_selector.h"
#include "shardscaler/metrics_api/external_metrics.h"

namespace shardscaler::metrics_api {

enum class Route {
  GroupList,     // /apis
  Group,         // /apis/external.metrics.k8s.io
  ResourceList,  // /apis/external.metrics.k8s.io/v1beta1: what the aggregator's checks read
  OpenApiV2,     // /openapi/v2: what the aggregator merges into the cluster's OpenAPI
  Metric,        // /apis/external.metrics.k8s.io/v1beta1/namespaces/<ns>/<metric>
};

// What the API server's RequestInfo makes of a request, for a SubjectAccessReview.
struct ResourceAttributes {
  std::string ns;
  std::string verb;  // "list": a metric is a collection, as for the API server
  std::string group;
  std::string version;
  std::string resource;
  friend bool operator==(const ResourceAttributes&, const ResourceAttributes&) = default;
};
struct NonResourceAttributes {
  std::string path;
  std::string verb;  // "get"
  friend bool operator==(const NonResourceAttributes&, const NonResourceAttributes&) = default;
};
using Attributes = std::variant<ResourceAttributes, NonResourceAttributes>;

struct ApiRequest {
  Route route = Route::GroupList;
  std::string path;                                  // as sent, without the query
  std::string ns;                                    // Metric
  MetricKind metric = MetricKind::SamplesPerSecond;  // Metric
  k8s::LabelSelector selector;                       // Metric: the labelSelector parameter
  Attributes attributes;
};

// A refusal as the API server words it: HTTP status, metav1.Status reason and message.
struct ApiError {
  int status = 500;
  std::string reason;  // NotFound, MethodNotAllowed, BadRequest, Unauthorized, Forbidden, ...
  std::string message;
};

// `query` is the raw query string ("labelSelector=shardset%3Dmain"). GET only.
std::expected<ApiRequest, ApiError> parseApiRequest(std::string_view method, std::string_view path,
                                                    std::string_view query);

// The value of one parameter of a query string, percent- and '+'-decoded; nullopt when absent.
std::optional<std::string> queryParameter(std::string_view query, std::string_view name);

// {"kind":"Status","apiVersion":"v1","status":"Failure","message":..,"reason":..,"code":..}
nlohmann::json statusJson(const ApiError& error);

}  // namespace shardscaler::metrics_api
