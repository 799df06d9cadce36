// The external metrics API inside `shardscaler run`: the routes it adds to the guard's HTTPS
// server, the front proxy settings it follows, who owns the APIService, and (with
// --register-api-service) its registration where none exists. It never serves a request the
// handler of shardscaler::metrics_api did not authenticate and authorize, and never writes an
// APIService that names another server.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "shardscaler/app/run_options.h"
#include "shardscaler/certificates/certificate_options.h"
#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/metrics_api/api_service_state.h"
#include "shardscaler/metrics_api/front_proxy_config_watch.h"
#include "shardscaler/metrics_api/metrics_api_handler.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::app {

class MetricsApiServer {
 public:
  // `client` is shardscaler's own; reads and reviews go through a client with a shorter timeout.
  // `events` records why a foreign APIService is left in place.
  MetricsApiServer(const RunOptions& options, k8s::RestClient& client,
                   std::shared_ptr<const k8s::Clock> clock, telemetry::Metrics& metrics,
                   k8s::EventRecorder& events);
  ~MetricsApiServer();
  MetricsApiServer(const MetricsApiServer&) = delete;
  MetricsApiServer& operator=(const MetricsApiServer&) = delete;

  // The CAs the HTTPS server verifies client certificates against (the front proxy's).
  std::shared_ptr<const certificates::TrustBundleSlot> clientTrust() const { return client_trust_; }
  // The APIService whose caBundle the certificate injector keeps current.
  certificates::CertificateOptions::ApiService apiService() const;
  // Adds /apis... and /openapi/v2 (before the server starts).
  void registerRoutes(serving::HttpServer& server);
  // Follows the front proxy's ConfigMap and the APIService, and registers it where none exists
  // (with --register-api-service) once `ca_bundle_base64` returns the serving CA (not "").
  void start(std::function<std::string()> ca_bundle_base64);
  void stop();

  // How soon registration is tried again after a failure or while the CA is not there yet.
  static constexpr std::chrono::seconds kRegisterRetry{5};

 private:
  void observe(const metrics_api::RequestOutcome& outcome, double seconds);
  void noteApiService(const nlohmann::json& api_service);
  void registerWhileRunning();
  // One attempt; false when it should be tried again soon.
  bool registerIfMissing();

  std::shared_ptr<const k8s::Clock> clock_;
  telemetry::Metrics& metrics_;
  const metrics_api::ServiceReference ours_;
  std::unique_ptr<k8s::RestClient> reads_client_;
  metrics_api::RequestHeaderConfigSlot config_;
  std::shared_ptr<certificates::TrustBundleSlot> client_trust_;
  std::unique_ptr<metrics_api::MetricsApiHandler> handler_;
  std::unique_ptr<metrics_api::FrontProxyConfigWatch> config_watch_;
  std::unique_ptr<k8s::Informer> api_service_informer_;
  std::mutex state_mutex_;
  std::optional<metrics_api::ApiServiceState> state_;  // as last reported
  k8s::EventRecorder& events_;
  const bool register_;
  const std::string owner_configuration_;  // the ValidatingWebhookConfiguration of the install
  std::function<std::string()> ca_bundle_;
  std::mutex register_mutex_;
  std::condition_variable register_wake_;
  bool register_stopping_ = false;
  bool register_requested_ = false;
  bool owner_gone_logged_ = false;  // the registration thread's only
  std::thread register_thread_;
};

}  // namespace shardscaler::app
