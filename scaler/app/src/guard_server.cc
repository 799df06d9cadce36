#include "guard_server.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/guard/self_identity.h"
#include "shardscaler/guard/untrusted_text.h"
#include "shardscaler/k8s_client/base64.h"

namespace shardscaler::app {
namespace {

// Inside the webhook's 5 s timeoutSeconds, so that a slow read ends in the guard's own denial
// (with its reason) rather than in the API server's timeout.
constexpr auto kLiveReadTimeout = std::chrono::seconds(4);
constexpr auto kIdentityRetryMax = std::chrono::seconds(30);
constexpr std::size_t kHandlerWorkers = 4;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

certificates::CertificateOptions certificateOptions(const RunOptions& o) {
  certificates::CertificateOptions s;
  s.certificate_mode = o.webhook_cert_dir.empty() ? certificates::CertificateMode::Secret
                                                  : certificates::CertificateMode::Directory;
  s.secret_namespace = o.webhook_cert_secret_namespace;
  s.secret_name = o.webhook_cert_secret;
  s.hosts = o.webhook_hosts;
  s.rotation.serving_validity =
      std::chrono::duration_cast<std::chrono::seconds>(o.webhook_cert_validity);
  s.rotation.ca_validity = std::chrono::duration_cast<std::chrono::seconds>(o.webhook_ca_validity);
  s.secret_poll_period = o.webhook_cert_refresh;
  s.webhook_configuration_name = o.webhook_configuration;
  s.injector_resync_period = o.webhook_cert_refresh;
  s.certificate_directory = o.webhook_cert_dir;
  s.directory_poll_period = o.webhook_cert_refresh;
  return s;
}

// Waits up to `d` on the clock, returning early (false) when `stopping` turns true.
bool pause(const k8s::Clock& clock, std::chrono::nanoseconds d,
           const std::function<bool()>& stopping) {
  std::mutex mutex;
  std::condition_variable cv;
  const auto deadline = clock.deadlineAfter(d);
  std::unique_lock lock(mutex);
  // Stop requests are noticed within a slice; nothing notifies this condition variable.
  while (clock.monotonicNow() < deadline) {
    if (stopping()) return false;
    const auto slice = std::min(deadline, clock.deadlineAfter(std::chrono::milliseconds(250)));
    clock.waitUntil(lock, cv, slice, [] { return false; });
  }
  return !stopping();
}

}  // namespace

GuardServer::GuardServer(const RunOptions& options, k8s::RestClient& client,
                         std::shared_ptr<const k8s::Clock> clock, telemetry::Metrics& metrics,
                         k8s::EventRecorder& events)
    : options_(options),
      client_(client),
      clock_(std::move(clock)),
      metrics_(metrics),
      warnings_(clock_) {
  if (options.external_metrics_api) {
    metrics_api_ = std::make_unique<MetricsApiServer>(options, client_, clock_, metrics_, events);
  }
}

GuardServer::~GuardServer() { stop(); }

Expected<std::string> GuardServer::selfUser(const std::function<bool()>& stopping) {
  if (!options_.guard_self_user.empty()) {
    base::logEvent(base::LogLevel::Info, "shard guard: shardscaler's own user",
                   {{"user", options_.guard_self_user}, {"source", "--guard-self-user"}});
    return options_.guard_self_user;
  }
  std::chrono::nanoseconds backoff = std::chrono::seconds(1);
  while (true) {
    auto identity = guard::discoverSelfIdentity(client_, client_.config());
    if (identity) {
      base::logEvent(base::LogLevel::Info, "shard guard: shardscaler's own user",
                     {{"user", identity->username}, {"source", identity->source}});
      return identity->username;
    }
    if (!identity.error().retryable) {
      return std::unexpected("shard guard: cannot tell which user shardscaler acts as: " +
                             identity.error().message);
    }
    base::logEvent(base::LogLevel::Warn,
                   "shard guard: cannot learn shardscaler's own identity yet; retrying",
                   {{"error", identity.error().message}, {"retry_in_seconds", seconds(backoff)}});
    metrics_.incDegraded("guard_identity_unavailable");
    if (!pause(*clock_, backoff, stopping)) {
      return std::unexpected("shard guard: stopped before shardscaler's own identity was known");
    }
    backoff = std::min<std::chrono::nanoseconds>(backoff * 2, kIdentityRetryMax);
  }
}

// One line per denial (and per bad review), at most a few per rule and period: a client repeating
// a forged review must not flood the log. The metrics count every one.
void GuardServer::observe(const guard::ReviewRecord& r) {
  const double latency = seconds(r.latency);
  if (r.verdict == nullptr) {
    metrics_.observeGuardReview("unknown", "bad_request", std::nullopt, latency);
    const auto logged = warnings_.admit("bad_review");
    if (logged.log) {
      base::logEvent(base::LogLevel::Warn, "shard guard: bad admission review",
                     {{"error", guard::untrustedText(r.error, 256)},
                      {"suppressed", static_cast<std::int64_t>(logged.suppressed)}});
    }
    return;
  }
  const guard::AdmissionRequest& q = *r.request;
  const guard::Verdict& v = *r.verdict;
  const std::string_view operation = guard::toString(q.operation);
  std::optional<telemetry::Metrics::GuardDenial> denial;
  if (!v.allowed) {
    denial = telemetry::Metrics::GuardDenial{.rule = v.reason,
                                             .requester = guard::requesterClass(q.user),
                                             .ns = q.ns,
                                             .shardset = v.shard_set};
  }
  metrics_.observeGuardReview(operation, v.allowed ? "allowed" : "denied", denial, latency);
  telemetry::WarningLimiter::Decision logged{.log = true};
  if (!v.allowed) logged = warnings_.admit("denied/" + v.reason);
  if (!logged.log) return;
  const std::string shard = v.shard_index ? std::to_string(*v.shard_index) : "";
  const base::LogLevel level = v.allowed ? base::LogLevel::Debug : base::LogLevel::Warn;
  base::logEvent(level,
                 v.allowed ? "shard guard allowed a request" : "shard guard denied a request",
                 {{"rule", v.reason},
                  {"operation", operation},
                  {"namespace", q.ns},
                  {"statefulset", q.name},
                  {"shard", shard},
                  {"shardset", v.shard_set},
                  {"target", v.target},
                  {"deadline", v.deadline},
                  {"user", guard::untrustedText(q.user.username, 128)},
                  {"dry_run", q.dry_run},
                  {"latency_seconds", latency},
                  {"message", v.message},
                  {"detail", guard::untrustedText(v.detail, 512)},
                  {"suppressed", static_cast<std::int64_t>(logged.suppressed)}});
}

Expected<void> GuardServer::start(const std::function<bool()>& stopping) {
  certificates::CertificateOptions certificate_options = certificateOptions(options_);
  if (metrics_api_) certificate_options.api_services.push_back(metrics_api_->apiService());
  if (auto ok = certificates::validate(certificate_options); !ok) {
    return std::unexpected("shard guard: " + ok.error());
  }
  auto self = selfUser(stopping);
  if (!self) return std::unexpected(self.error());

  k8s::KubeConfig reads_config = client_.config();
  reads_config.request_timeout = kLiveReadTimeout;
  reads_client_ = std::make_unique<k8s::RestClient>(std::move(reads_config),
                                                    k8s::RestClientOptions{.clock = clock_});
  guard::GuardConfig config{.self_user = *self,
                            .exempt_users = options_.guard_exempt_users,
                            .exempt_groups = options_.guard_exempt_groups,
                            .cleanup_users = options_.guard_cleanup_users};
  guard_ =
      std::make_unique<guard::ShardGuard>(*reads_client_, *clock_, std::move(config),
                                          [this](const guard::ReviewRecord& r) { observe(r); });

  const auto degraded = [this](std::string_view reason) { metrics_.incDegraded(reason); };
  auto parts = certificates::makeCertificateParts(certificate_options, client_, clock_, degraded);
  if (!parts) return std::unexpected("shard guard: " + parts.error());
  certificates_ = std::move(*parts);
  if (certificates_.store) certificates_.store->start();
  if (certificates_.files) certificates_.files->start();

  server_ = std::make_unique<serving::HttpServer>(serving::HttpServer::Options{
      .address = *options_.webhook_bind_address,
      .certificates = certificates_.source,
      // The front proxy proves itself with a certificate; the webhook's callers send none. A
      // certificate that does not verify reaches the metrics handler unverified (its 401).
      .client_certificates = metrics_api_ ? serving::ClientCertificateMode::Request
                                          : serving::ClientCertificateMode::None,
      .client_trust = metrics_api_ ? metrics_api_->clientTrust() : nullptr,
      .workers = kHandlerWorkers,
      // The largest body is the guard's AdmissionReview; the metrics API takes none.
      .limits = {.max_body_bytes = guard::kMaxReviewBytes},
      .observer =
          [this](const serving::RequestRecord& r) {
            // What never reached the guard's handler (no route, too large, malformed HTTP).
            if (r.route.empty() && r.status >= 400) {
              metrics_.observeGuardReview("unknown", "bad_request", std::nullopt,
                                          seconds(r.latency));
            }
          },
      .degraded = degraded,
      .clock = clock_,
  });
  server_->handle("POST", std::string(guard::kGuardPath),
                  [this](const serving::Request& request) {
                    guard::HttpAnswer answer = guard_->review(request.body);
                    serving::Response response;
                    response.status = answer.status;
                    response.content_type = std::move(answer.content_type);
                    response.body = std::move(answer.body);
                    return response;
                  },
                  {.max_body_bytes = guard::kMaxReviewBytes});
  if (metrics_api_) metrics_api_->registerRoutes(*server_);
  auto port = server_->start();
  if (!port) return std::unexpected("shard guard: cannot serve: " + port.error());
  startServing(*port);
  return {};
}

// Serving on `port`: readiness, then the parts that need the certificates in use.
void GuardServer::startServing(std::uint16_t port) {
  serving_.store(true, std::memory_order_release);
  base::logEvent(base::LogLevel::Info, "shard guard serving",
                 {{"path", guard::kGuardPath},
                  {"address", options_.webhook_bind_address->toString()},
                  {"port", port}});
  // Every replica keeps the caBundle current: the patches are idempotent and carry a
  // resourceVersion precondition, and a standby keeps it right while the leader is gone.
  if (certificates_.injector) certificates_.injector->start();
  if (metrics_api_) {
    metrics_api_->start([source = certificates_.source]() -> std::string {
      const auto current = source ? source->current() : nullptr;
      return current ? k8s::base64Encode(current->caBundlePem()) : std::string();
    });
    base::logEvent(base::LogLevel::Info, "external metrics API serving",
                   {{"api", "external.metrics.k8s.io/v1beta1"}, {"port", port}});
  }
}

Expected<void> GuardServer::readiness() const {
  if (!serving_.load(std::memory_order_acquire)) {
    return std::unexpected("the shard guard is not serving yet");
  }
  if (!certificates_.source || !certificates_.source->current()) {
    return std::unexpected("the shard guard has no serving certificate yet (" +
                           (options_.webhook_cert_dir.empty()
                                ? "Secret " + options_.webhook_cert_secret_namespace + "/" +
                                      options_.webhook_cert_secret
                                : "directory " + options_.webhook_cert_dir) +
                           ")");
  }
  return {};
}

Expected<void> GuardServer::liveness() const {
  if (!serving_.load(std::memory_order_acquire)) return {};
  return server_->health();
}

void GuardServer::stop() {
  if (metrics_api_) metrics_api_->stop();
  if (certificates_.injector) certificates_.injector->stop();
  if (server_) server_->stop();
  if (certificates_.store) certificates_.store->stop();
  if (certificates_.files) certificates_.files->stop();
}

}  // namespace shardscaler::app
