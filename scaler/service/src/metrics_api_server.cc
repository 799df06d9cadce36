#include "metrics_api_server.h"

#include "shardscaler/base/log.h"

namespace shardscaler::service {
namespace {

// The aggregator gives up on a backend after its own timeouts (the HPA's request has about 30 s,
// the availability check 6 s); an answer, even an error, must come well before.
constexpr auto kReadTimeout = std::chrono::seconds(4);

k8s::Resource apiServices() { return {"apiregistration.k8s.io", "v1", "apiservices", false}; }

}  // namespace

MetricsApiServer::MetricsApiServer(const RunOptions& options, k8s::RestClient& client,
                                   std::shared_ptr<const k8s::Clock> clock,
                                   telemetry::Metrics& metrics)
    : clock_(std::move(clock)),
      metrics_(metrics),
      ours_{options.external_metrics_service_namespace, options.external_metrics_service},
      client_trust_(std::make_shared<serving::TrustBundleSlot>()) {
  k8s::KubeConfig reads_config = client.config();
  reads_config.request_timeout = kReadTimeout;
  reads_client_ = std::make_unique<k8s::RestClient>(std::move(reads_config),
                                                    k8s::RestClientOptions{.clock = clock_});
  handler_ = std::make_unique<metrics_api::MetricsApiHandler>(
      *reads_client_, *clock_, config_,
      metrics_api::MetricsApiHandlerOptions{
          .staleness = {.intervals =
                            static_cast<double>(options.external_metrics_max_age_intervals),
                        .floor = options.external_metrics_min_max_age},
      });
  config_watch_ = std::make_unique<metrics_api::FrontProxyConfigWatch>(
      client, *clock_, config_, *client_trust_,
      [this](std::string_view reason) { metrics_.incDegraded(reason); });
  k8s::InformerOptions informer_options;
  informer_options.field_selector = "metadata.name=" + std::string(metrics_api::kApiServiceName);
  informer_options.resync_period = std::chrono::minutes(5);
  api_service_informer_ =
      std::make_unique<k8s::Informer>(client, apiServices(), informer_options, *clock_);
  api_service_informer_->addEventHandlers(k8s::EventHandlers{
      .on_add = [this](const k8s::ObjectPtr& o) { noteApiService(*o); },
      .on_update = [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { noteApiService(*o); },
      .on_delete = [this](const k8s::ObjectPtr&) { noteApiService(nlohmann::json()); },
  });
}

MetricsApiServer::~MetricsApiServer() { stop(); }

serving::ServingOptions::ApiService MetricsApiServer::apiService() const {
  return {std::string(metrics_api::kApiServiceName), ours_.ns, ours_.name};
}

void MetricsApiServer::registerRoutes(serving::HttpsServer& server) {
  // Every method: the handler answers anything but GET with the API server's 405 Status.
  const auto handle = [this](const serving::Request& request) {
    const auto started = clock_->monotonicNow();
    metrics_api::RequestOutcome outcome;
    serving::Response response = handler_->handle(request, outcome);
    observe(outcome, std::chrono::duration<double>(clock_->monotonicNow() - started).count());
    return response;
  };
  // GETs only, as the aggregator sends them: a body is refused (413) before the handler.
  const serving::HttpsServer::RouteOptions no_body{.max_body_bytes = 0};
  server.handlePrefix("*", "/apis", handle, no_body);
  server.handle("*", "/openapi/v2", handle, no_body);
}

void MetricsApiServer::observe(const metrics_api::RequestOutcome& o, double seconds) {
  metrics_.observeExternalMetricsRequest(o.route, o.status, o.reason, seconds);
  const bool failed = o.status >= 400;
  // A refused or failed metric is what an HPA acts upon (it keeps the count): say why.
  const base::LogLevel level = o.status >= 500 ? base::LogLevel::Warn
                               : failed        ? base::LogLevel::Info
                                               : base::LogLevel::Debug;
  base::logEvent(
      level, failed ? "external metrics API refused a request" : "external metrics API answered",
      {{"route", o.route},
       {"status", o.status},
       {"reason", o.reason},
       {"user", o.user},
       {"metric", o.metric},
       {"namespace", o.ns},
       {"selector", o.selector},
       {"values", o.values},
       {"cached_decision", o.cached_decision},
       {"latency_seconds", seconds},
       {"message", o.message}});
  if (o.status >= 500) metrics_.incDegraded("external_metrics_request_failed");
}

void MetricsApiServer::noteApiService(const nlohmann::json& api_service) {
  const metrics_api::ApiServiceState state = metrics_api::apiServiceState(api_service, ours_);
  {
    std::lock_guard lock(state_mutex_);
    if (state_ == state) return;
    state_ = state;
  }
  metrics_.setExternalMetricsApiOwner(metrics_api::toString(state.ownership), state.available);
  const std::string message = metrics_api::describe(state, ours_);
  if (state.ownership == metrics_api::Ownership::Ours && state.available) {
    base::logEvent(base::LogLevel::Info, "external metrics API: " + message,
                   {{"ownership", metrics_api::toString(state.ownership)}, {"available", true}});
    return;
  }
  base::logEvent(
      base::LogLevel::Warn, "external metrics API: " + message,
      {{"ownership", metrics_api::toString(state.ownership)}, {"available", state.available}});
  metrics_.incDegraded(state.ownership == metrics_api::Ownership::Ours
                           ? "external_metrics_api_unavailable"
                           : "external_metrics_api_not_ours");
}

void MetricsApiServer::start() {
  config_watch_->start();
  api_service_informer_->start();
}

void MetricsApiServer::stop() {
  if (config_watch_) config_watch_->stop();
  if (api_service_informer_) api_service_informer_->stop();
}

}  // namespace shardscaler::service
