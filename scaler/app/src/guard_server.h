// The shard guard inside `shardscaler run`, on every replica: shardscaler's own identity, the
// serving certificate, the HTTPS server of the webhook (and of the external metrics API, which
// shares it) and the caBundle injection. It never starts the controller; an error from start()
// means shardscaler must not run without its guard.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_options.h"
#include "shardscaler/guard/shard_guard.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/serving/http_server.h"
#include "shardscaler/telemetry/metrics.h"
#include "shardscaler/telemetry/warning_limiter.h"

#include "metrics_api_server.h"

namespace shardscaler::app {

class GuardServer {
 public:
  // `client` is shardscaler's own (its credentials say who shardscaler is); the guard's live reads
  // go through a client of their own with a timeout inside the webhook's.
  // `events` carries what the external metrics API says about its APIService.
  GuardServer(const RunOptions& options, k8s::RestClient& client,
              std::shared_ptr<const k8s::Clock> clock, telemetry::Metrics& metrics,
              k8s::EventRecorder& events);
  ~GuardServer();
  GuardServer(const GuardServer&) = delete;
  GuardServer& operator=(const GuardServer&) = delete;

  // Learns shardscaler's own identity (asking again while the API server does not answer, until
  // `stopping` returns true), starts the certificate source, the HTTPS server and the caBundle
  // injector. The error is one line naming the problem.
  Expected<void> start(const std::function<bool()>& stopping);
  // Ready once the server has a certificate to present.
  Expected<void> readiness() const;
  // Alive while the HTTPS server's I/O thread serves (before start(): alive, as nothing failed).
  Expected<void> liveness() const;
  void stop();

 private:
  Expected<std::string> selfUser(const std::function<bool()>& stopping);
  void startServing(std::uint16_t port);
  void observe(const guard::ReviewRecord& record);

  const RunOptions& options_;
  k8s::RestClient& client_;
  std::shared_ptr<const k8s::Clock> clock_;
  telemetry::Metrics& metrics_;
  telemetry::WarningLimiter warnings_;  // denials and bad reviews, per rule
  std::unique_ptr<k8s::RestClient> reads_client_;
  std::unique_ptr<guard::ShardGuard> guard_;
  certificates::CertificateParts certificates_;
  std::unique_ptr<serving::HttpServer> server_;
  std::atomic<bool> serving_{false};               // server_ started: the probes may ask it
  std::unique_ptr<MetricsApiServer> metrics_api_;  // with --external-metrics-api
};

}  // namespace shardscaler::app
