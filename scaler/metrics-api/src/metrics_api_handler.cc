#include "shardscaler/metrics_api/metrics_api_handler.h"

#include <algorithm>

#include "shardscaler/metrics_api/discovery.h"

#include "metrics_api_resources.h"
#include "shardscaler/api/field_names.h"
#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::metrics_api {
namespace {

using Json = nlohmann::json;

// metadata.name, "" when it is missing or not a string (a list item is whatever was stored).
std::string nameOf(const Json& object) { return k8s::meta::stringAt(object, "metadata", "name"); }

// What the client sent (a label selector, a path) may be any bytes, and an error repeats it: what
// is not UTF-8 is replaced rather than thrown on (a 500 where a 400 is due).
std::string jsonText(const Json& document) {
  return document.dump(-1, ' ', false, Json::error_handler_t::replace);
}

serving::Response errorResponse(const ApiError& error, RequestOutcome& outcome) {
  outcome.status = error.status;
  if (outcome.reason.empty()) outcome.reason = error.reason;
  outcome.message = error.message;
  return serving::Response::json(error.status, jsonText(statusJson(error)));
}

std::string routeName(Route route) {
  switch (route) {
    case Route::Metric:
      return "metric";
    case Route::OpenApiV2:
      return "openapi";
    default:
      return "discovery";
  }
}

bool hasIngestion(const Json& shard_set) {
  const Json spec = shard_set.value(api::field::kSpec, Json::object());
  return spec.is_object() && spec.contains(api::field::kIngestion);
}

}  // namespace

MetricsApiHandler::MetricsApiHandler(k8s::KubeClient& client, const k8s::Clock& clock,
                                     const RequestHeaderConfigSlot& config,
                                     MetricsApiHandlerOptions options)
    : client_(client),
      clock_(clock),
      config_(config),
      options_(std::move(options)),
      cache_(options_.decision_cache) {
  if (options_.shard_sets.resource.empty()) options_.shard_sets = api::shardSets();
}

serving::Response MetricsApiHandler::handle(const serving::Request& request) {
  RequestOutcome outcome;
  serving::Response response = handle(request, outcome);
  if (options_.observer) options_.observer(outcome);
  return response;
}

serving::Response MetricsApiHandler::handle(const serving::Request& request,
                                            RequestOutcome& outcome) {
  outcome = RequestOutcome{};
  outcome.route = "none";
  return answer(request, outcome);
}

serving::Response MetricsApiHandler::answer(const serving::Request& request,
                                            RequestOutcome& outcome) {
  const auto config = config_.current();
  if (!config) {
    return errorResponse({503, "ServiceUnavailable",
                          "shardscaler has not read the front proxy's settings yet (ConfigMap " +
                              std::string(kAuthenticationConfigMapNamespace) + "/" +
                              std::string(kAuthenticationConfigMapName) + ")"},
                         outcome);
  }
  // Authentication first, as the API server does: an unknown caller learns nothing, not even
  // which paths exist.
  auto user = authenticate(request.peer, request.headers, *config);
  if (!user) {
    return errorResponse({401, "Unauthorized", "Unauthorized: " + user.error()}, outcome);
  }
  outcome.user = user->name;
  auto parsed = parseApiRequest(request.method, request.path, request.query);
  if (!parsed) return errorResponse(parsed.error(), outcome);
  outcome.route = routeName(parsed->route);
  if (parsed->route == Route::Metric) {
    outcome.metric = std::string(metricName(parsed->metric));
    outcome.ns = parsed->ns;
    outcome.selector = parsed->selector.text();
  }
  const AccessRequest access{*user, parsed->attributes};
  auto decision = authorize(access, outcome);
  if (!decision) return errorResponse(decision.error(), outcome);
  if (!decision->allowed) {
    return errorResponse({403, "Forbidden", forbiddenMessage(access, *decision)}, outcome);
  }

  outcome.status = 200;
  switch (parsed->route) {
    case Route::GroupList:
      return serving::Response::json(200, jsonText(apiGroupList()));
    case Route::Group:
      return serving::Response::json(200, jsonText(apiGroup()));
    case Route::ResourceList:
      return serving::Response::json(200, jsonText(apiResourceList()));
    case Route::OpenApiV2: {
      const OpenApiDocument& document = openApiV2();
      serving::Response response;
      response.headers.emplace_back("ETag", document.etag);
      if (request.header("If-None-Match") == document.etag) {
        outcome.status = 304;
        response.status = 304;
        return response;
      }
      response.status = 200;
      response.body = document.body;
      return response;
    }
    case Route::Metric:
      return serveMetric(*parsed, outcome);
  }
  return errorResponse({404, "NotFound", "no route"}, outcome);
}

std::expected<AccessDecision, ApiError> MetricsApiHandler::authorize(const AccessRequest& request,
                                                                     RequestOutcome& outcome) {
  const std::string key = AccessDecisionCache::keyOf(request);
  {
    std::lock_guard lock(cache_mutex_);
    if (auto cached = cache_.find(key, clock_.monotonicNow())) {
      outcome.cached_decision = true;
      return *cached;
    }
  }
  auto created = client_.create(detail::subjectAccessReviews(), "", subjectAccessReview(request));
  if (!created) {
    outcome.reason = "AuthorizationFailed";
    return std::unexpected(ApiError{
        500, "InternalError",
        "shardscaler could not ask the API server whether \"" + request.user.name +
            "\" may make this request (SubjectAccessReview): " + created.error().describe()});
  }
  auto decision = accessDecisionOf(*created);
  if (!decision) {
    outcome.reason = "AuthorizationFailed";
    return std::unexpected(ApiError{500, "InternalError", decision.error()});
  }
  std::lock_guard lock(cache_mutex_);
  cache_.put(key, *decision, clock_.monotonicNow());
  return *decision;
}

serving::Response MetricsApiHandler::serveMetric(const ApiRequest& request,
                                                 RequestOutcome& outcome) {
  const std::string shard_set_label(kShardSetLabel);
  std::vector<Json> candidates;
  if (auto name = request.selector.pinnedValue(shard_set_label)) {
    auto object = client_.get(options_.shard_sets, request.ns, *name);
    if (object) {
      candidates.push_back(std::move(*object));
    } else if (!object.error().is(k8s::ErrorKind::NotFound)) {
      outcome.reason = "ReadFailed";
      return errorResponse({503, "ServiceUnavailable",
                            "shardscaler cannot read ShardSet " + request.ns + "/" + *name + ": " +
                                object.error().describe()},
                           outcome);
    }
  } else {
    auto list = k8s::listAll(client_, options_.shard_sets, request.ns);
    if (!list) {
      outcome.reason = "ReadFailed";
      return errorResponse({503, "ServiceUnavailable",
                            "shardscaler cannot list the ShardSets of namespace " + request.ns +
                                ": " + list.error().describe()},
                           outcome);
    }
    for (Json& item : (*list)["items"]) {
      // Without a selector, ShardSets that measure nothing are not series at all.
      if (request.selector.empty() && !hasIngestion(item)) continue;
      candidates.push_back(std::move(item));
    }
  }
  std::vector<const Json*> selected;
  for (const Json& candidate : candidates) {
    const std::string name = nameOf(candidate);
    if (request.selector.matches({{shard_set_label, name}})) selected.push_back(&candidate);
  }
  std::ranges::sort(selected, {}, [](const Json* j) { return nameOf(*j); });
  if (selected.empty() && !request.selector.empty()) {
    outcome.reason = "NoShardSet";
    return errorResponse({404, "NotFound",
                          "no ShardSet in namespace " + request.ns + " matches the selector \"" +
                              request.selector.text() + "\" (series are labelled " +
                              shard_set_label + "=<ShardSet name>)"},
                         outcome);
  }
  std::vector<MetricValue> values;
  for (const Json* shard_set : selected) {
    auto value = metricValue(*shard_set, request.metric, clock_.now(), options_.staleness);
    if (!value) {
      // One ShardSet without a trustworthy value fails the whole answer: a list without it
      // would be a smaller total, which an HPA would act upon.
      outcome.reason = value.error().reason;
      return errorResponse({503, "ServiceUnavailable",
                            std::string(metricName(request.metric)) + ": " + value.error().message},
                           outcome);
    }
    values.push_back(std::move(*value));
  }
  outcome.values = static_cast<int>(values.size());
  return serving::Response::json(
      200, jsonText(externalMetricValueList(metricName(request.metric), values)));
}

}  // namespace shardscaler::metrics_api
