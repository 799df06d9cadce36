// The discovery documents of external.metrics.k8s.io/v1beta1 (APIGroupList, APIGroup,
// APIResourceList) and its OpenAPI v2 document, as the aggregator and kubectl read them. Pure and
// constant; must never list a metric that the metric route does not serve.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::metrics_api {

// /apis/external.metrics.k8s.io/v1beta1: one namespaced resource per metric, kind
// ExternalMetricValueList, verbs [get] (as prometheus-adapter and KEDA publish them).
nlohmann::json apiResourceList();
// /apis/external.metrics.k8s.io
nlohmann::json apiGroup();
// /apis
nlohmann::json apiGroupList();

// /openapi/v2. The 1.20 aggregator downloads it from every APIService's backend (as user
// system:aggregator) and merges it into the cluster's; on a 404 it logs "OpenAPI spec does not
// exist" and retries with backoff up to an hour, forever. The ETag lets it ask with If-None-Match.
struct OpenApiDocument {
  std::string body;  // JSON
  std::string etag;  // a strong ETag: "\"<sha256 of body>\""
};
const OpenApiDocument& openApiV2();

}  // namespace shardscaler::metrics_api
