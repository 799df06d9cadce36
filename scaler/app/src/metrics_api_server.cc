#include "metrics_api_server.h"

#include "shardscaler/base/log.h"
#include "shardscaler/metrics_api/api_service_registration.h"

namespace shardscaler::app {
namespace {

// The aggregator gives up on a backend after its own timeouts (the HPA's request has about 30 s,
// the availability check 6 s); an answer, even an error, must come well before.
constexpr auto kReadTimeout = std::chrono::seconds(4);

k8s::Resource apiServices() { return {"apiregistration.k8s.io", "v1", "apiservices", false}; }
k8s::Resource webhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", false};
}

}  // namespace

MetricsApiServer::MetricsApiServer(const RunOptions& options, k8s::RestClient& client,
                                   std::shared_ptr<const k8s::Clock> clock,
                                   telemetry::Metrics& metrics, k8s::EventRecorder& events)
    : clock_(std::move(clock)),
      metrics_(metrics),
      ours_{options.external_metrics_service_namespace, options.external_metrics_service},
      client_trust_(std::make_shared<certificates::TrustBundleSlot>()),
      events_(events),
      register_(options.register_api_service),
      owner_configuration_(options.webhook_configuration) {
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

certificates::CertificateOptions::ApiService MetricsApiServer::apiService() const {
  return {std::string(metrics_api::kApiServiceName), ours_.ns, ours_.name};
}

void MetricsApiServer::registerRoutes(serving::HttpServer& server) {
  // Every method: the handler answers anything but GET with the API server's 405 Status.
  const auto handle = [this](const serving::Request& request) {
    const auto started = clock_->monotonicNow();
    metrics_api::RequestOutcome outcome;
    serving::Response response = handler_->handle(request, outcome);
    observe(outcome, std::chrono::duration<double>(clock_->monotonicNow() - started).count());
    return response;
  };
  // GETs only, as the aggregator sends them: a body is refused (413) before the handler.
  const serving::HttpServer::RouteOptions no_body{.max_body_bytes = 0};
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
  if (register_) {
    {
      std::lock_guard lock(register_mutex_);
      register_requested_ = true;
    }
    register_wake_.notify_all();
    // Said where `kubectl describe apiservice` shows it, once per change of owner (the recorder
    // folds repeats into one Event).
    const std::string why = metrics_api::notOursMessage(state, ours_);
    if (!why.empty()) {
      events_.record(
          {.api_version = "apiregistration.k8s.io/v1",
           .kind = "APIService",
           .name = std::string(metrics_api::kApiServiceName),
           .uid = api_service.value("/metadata/uid"_json_pointer, ""),
           .resource_version = api_service.value("/metadata/resourceVersion"_json_pointer, "")},
          k8s::EventType::Warning, std::string(metrics_api::kApiServiceNotOursReason), why);
    }
  }
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

bool MetricsApiServer::registerIfMissing() {
  if (!api_service_informer_->hasSynced()) return false;
  metrics_api::ApiServiceState state;  // none seen since the list: missing
  {
    std::lock_guard lock(state_mutex_);
    if (state_) state = *state_;
  }
  if (!metrics_api::shouldCreate(state)) return true;
  // Registered only once this replica can serve: the aggregator checks availability at once, and
  // an APIService that cannot be reached fails the cluster's discovery of the group.
  const std::string bundle = ca_bundle_ ? ca_bundle_() : std::string();
  if (bundle.empty()) return false;
  // The install's webhook configuration owns the APIService, so that deleting the install
  // deletes it. Without it (not applied yet, or the install being deleted) nothing is created:
  // an APIService created then would outlive the install and fail the cluster's discovery.
  auto owner = reads_client_->get(webhookConfigurations(), "", owner_configuration_);
  const bool owner_gone = owner ? owner->contains("/metadata/deletionTimestamp"_json_pointer)
                                : owner.error().is(k8s::ErrorKind::NotFound);
  if (!owner || owner_gone) {
    if (!owner_gone || !owner_gone_logged_) {
      base::logEvent(
          base::LogLevel::Warn,
          owner_gone ? "external metrics API: the install's webhook configuration is missing or "
                       "being deleted; the APIService is not registered without it"
                     : "external metrics API: cannot read the install's webhook configuration to "
                       "register the APIService; retrying",
          {{"configuration", owner_configuration_},
           {"error", owner ? std::string("being deleted") : owner.error().describe()}});
      metrics_.incDegraded("external_metrics_api_register_failed");
    }
    owner_gone_logged_ = owner_gone;
    return false;
  }
  owner_gone_logged_ = false;
  const nlohmann::json object = metrics_api::apiServiceFor(ours_, bundle, *owner);
  auto created = reads_client_->create(apiServices(), "", object);
  if (created || created.error().is(k8s::ErrorKind::AlreadyExists)) {
    if (created) {
      base::logEvent(base::LogLevel::Info, "external metrics API: registered the APIService",
                     {{"api_service", metrics_api::kApiServiceName},
                      {"service", ours_.describe()},
                      {"owner", "ValidatingWebhookConfiguration " + owner_configuration_}});
    }
    return true;  // the informer reports what is there now
  }
  base::logEvent(
      base::LogLevel::Warn, "external metrics API: registering the APIService failed",
      {{"api_service", metrics_api::kApiServiceName}, {"error", created.error().describe()}});
  metrics_.incDegraded("external_metrics_api_register_failed");
  return false;
}

void MetricsApiServer::registerWhileRunning() {
  std::unique_lock lock(register_mutex_);
  while (!register_stopping_) {
    register_requested_ = false;
    lock.unlock();
    const bool settled = registerIfMissing();
    lock.lock();
    // Woken by a change of the APIService; until the informer has synced, and after a failure,
    // the next attempt comes soon anyway.
    const auto next = clock_->deadlineAfter(settled ? std::chrono::minutes(5) : kRegisterRetry);
    clock_->waitUntil(lock, register_wake_, next,
                      [this] { return register_stopping_ || register_requested_; });
  }
}

void MetricsApiServer::start(std::function<std::string()> ca_bundle_base64) {
  config_watch_->start();
  api_service_informer_->start();
  if (register_) {
    ca_bundle_ = std::move(ca_bundle_base64);
    register_thread_ = std::thread([this] { registerWhileRunning(); });
  }
}

void MetricsApiServer::stop() {
  {
    std::lock_guard lock(register_mutex_);
    register_stopping_ = true;
  }
  register_wake_.notify_all();
  if (register_thread_.joinable()) register_thread_.join();
  if (config_watch_) config_watch_->stop();
  if (api_service_informer_) api_service_informer_->stop();
}

}  // namespace shardscaler::app
