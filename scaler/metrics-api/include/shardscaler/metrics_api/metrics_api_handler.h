// One request to the aggregated external metrics API, end to end: route, authenticate the front
// proxy, authorize with a SubjectAccessReview (cached briefly), read the ShardSets and answer.
// It never answers a metric with a value the fail-safe rule refuses, and never serves a request
// whose caller was not both authenticated and authorized.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/metrics_api/access_review.h"
#include "shardscaler/metrics_api/api_request.h"
#include "shardscaler/metrics_api/external_metrics.h"
#include "shardscaler/metrics_api/front_proxy.h"
#include "shardscaler/serving/http_exchange.h"

namespace shardscaler::metrics_api {

// The current request-header config; thread-safe. Empty until the ConfigMap was read.
class RequestHeaderConfigSlot {
 public:
  void set(std::shared_ptr<const RequestHeaderConfig> config) {
    std::lock_guard lock(mutex_);
    current_ = std::move(config);
  }
  std::shared_ptr<const RequestHeaderConfig> current() const {
    std::lock_guard lock(mutex_);
    return current_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const RequestHeaderConfig> current_;
};

// What became of one request, for a log line and the metrics.
struct RequestOutcome {
  std::string route;  // "metric", "discovery", "openapi", "none"
  int status = 0;
  std::string user;    // "" when not authenticated
  std::string metric;  // Metric route
  std::string ns;      // Metric route
  std::string selector;
  // Why it was not a 2xx/304: "Unauthorized", "Forbidden", "StaleRates", ... ("" when it was).
  std::string reason;
  std::string message;
  int values = 0;  // items answered
  // Whether the SubjectAccessReview answer came from the cache (false when none was needed).
  bool cached_decision = false;
};

struct MetricsApiHandlerOptions {
  k8s::Resource shard_sets;  // shardscaler.io/v1alpha1 shardsets
  StalenessPolicy staleness;
  AccessDecisionCache::Options decision_cache;
  // Called after each request (on the worker thread): must be thread-safe.
  std::function<void(const RequestOutcome&)> observer;
};

class MetricsApiHandler {
 public:
  // `client` reads ShardSets and creates SubjectAccessReviews with shardscaler's credentials;
  // its request timeout bounds each request. All references must outlive the handler.
  MetricsApiHandler(k8s::KubeClient& client, const k8s::Clock& clock,
                    const RequestHeaderConfigSlot& config, MetricsApiHandlerOptions options);

  serving::Response handle(const serving::Request& request);
  // The same, telling the caller what became of the request (the observer is not called).
  serving::Response handle(const serving::Request& request, RequestOutcome& outcome);

 private:
  serving::Response answer(const serving::Request& request, RequestOutcome& outcome);
  std::expected<AccessDecision, ApiError> authorize(const AccessRequest& request,
                                                    RequestOutcome& outcome);
  serving::Response serveMetric(const ApiRequest& request, RequestOutcome& outcome);

  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  const RequestHeaderConfigSlot& config_;
  MetricsApiHandlerOptions options_;
  std::mutex cache_mutex_;
  AccessDecisionCache cache_;
};

}  // namespace shardscaler::metrics_api
