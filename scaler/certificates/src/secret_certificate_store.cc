#include "shardscaler/certificates/secret_certificate_store.h"

#include <algorithm>

#include "certificate_secret.h"
#include "periodic_task.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::certificates {
namespace {

// Conflicts and races with other replicas are re-read and re-planned this many times per round.
constexpr int kReadAttempts = 5;
// A round writes at most this often: a plan carried out must not want another write at once.
constexpr int kWritesPerRead = 3;
constexpr auto kMinimumDelay = std::chrono::seconds(1);
// The first retry after a failed round: a replica that starts while the API server has a moment's
// trouble serves (and so lets its shard guard answer) within a fraction of a second, not a
// retry period later.
constexpr auto kFirstRetry = std::chrono::milliseconds(250);

std::string joinReasons(const std::vector<std::string>& reasons) {
  std::string text;
  for (const auto& reason : reasons) text += (text.empty() ? "" : "; ") + reason;
  return text;
}

}  // namespace

Expected<void> validate(const SecretCertificateStoreOptions& options) {
  if (options.secret_namespace.empty() || options.secret_name.empty()) {
    return std::unexpected("the certificate Secret needs a namespace and a name");
  }
  if (options.hosts.empty()) {
    return std::unexpected("the serving certificate needs at least one host (DNS name or IP)");
  }
  for (const auto& host : options.hosts) {
    if (auto ok = validateHost(host); !ok) return std::unexpected("serving hosts: " + ok.error());
  }
  if (options.names.ca_common_name.empty() || options.names.serving_common_name.empty()) {
    return std::unexpected("certificate common names must not be empty");
  }
  if (options.poll_period <= std::chrono::nanoseconds(0) ||
      options.retry_period <= std::chrono::nanoseconds(0)) {
    return std::unexpected("the certificate Secret's poll and retry periods must be positive");
  }
  return validate(options.rotation);
}

SecretCertificateStore::SecretCertificateStore(k8s::KubeClient& client,
                                               std::shared_ptr<const k8s::Clock> clock,
                                               SecretCertificateStoreOptions options)
    : client_(client),
      clock_(std::move(clock)),
      options_(std::move(options)),
      // 250 ms, doubling, at most the retry period, exactly (no jitter); a success starts over.
      retry_backoff_(k8s::BackoffOptions{.initial = std::min<std::chrono::nanoseconds>(
                                             kFirstRetry, options_.retry_period),
                                         .max = options_.retry_period,
                                         .jitter = 0.0,
                                         .reset_after = std::chrono::nanoseconds::max()},
                     *clock_) {
  task_ = std::make_unique<detail::PeriodicTask>(clock_, [this]() -> std::chrono::nanoseconds {
    Expected<SystemTime> review_at;
    {
      std::lock_guard lock(sync_mutex_);
      review_at = syncLocked();
    }
    if (!review_at) return retry_backoff_.next();
    retry_backoff_.reset();
    const auto until_review = *review_at - clock_->now();
    const auto minimum = std::min<std::chrono::nanoseconds>(options_.poll_period, kMinimumDelay);
    return std::clamp<std::chrono::nanoseconds>(until_review, minimum, options_.poll_period);
  });
}

SecretCertificateStore::~SecretCertificateStore() { stop(); }

void SecretCertificateStore::start() { task_->start(); }

void SecretCertificateStore::stop() { task_->stop(); }

Expected<void> SecretCertificateStore::sync() {
  std::lock_guard lock(sync_mutex_);
  auto review_at = syncLocked();
  if (!review_at) return std::unexpected(review_at.error());
  return {};
}

std::string SecretCertificateStore::describe() const {
  return options_.secret_namespace + "/" + options_.secret_name;
}

void SecretCertificateStore::degraded(std::string_view reason, const std::string& detail) const {
  base::logEvent(base::LogLevel::Warn, "certificate Secret degraded",
                 {{"reason", reason}, {"secret", describe()}, {"error", detail}});
  if (options_.degraded) options_.degraded(reason);
}

Expected<k8s::Json> SecretCertificateStore::create(SystemTime now) {
  StoredCertificates nothing;
  nothing.serving_problem = "the Secret does not exist";
  nothing.ca_problem = "the Secret does not exist";
  const auto plan = planCertificates(nothing, options_.hosts, options_.rotation, now);
  auto data = applyCertificatePlan(plan, nothing, options_.rotation, options_.names, now);
  if (!data) return std::unexpected(data.error());
  auto secret = detail::newCertificateSecret(options_.secret_namespace, options_.secret_name,
                                             options_.labels);
  detail::encodeCertificateSecret(secret, *data);
  return secret;
}

Expected<SystemTime> SecretCertificateStore::syncLocked() {
  const k8s::Resource secrets = k8s::resources::secrets();
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    const SystemTime now = clock_->now();
    auto got = client_.get(secrets, options_.secret_namespace, options_.secret_name);
    k8s::Json secret;
    if (got) {
      secret = std::move(*got);
    } else if (got.error().is(k8s::ErrorKind::NotFound)) {
      auto fresh = create(now);
      if (!fresh) {
        degraded("certificate_secret_unusable", "generate certificates: " + fresh.error());
        return std::unexpected(fresh.error());
      }
      auto created = client_.create(secrets, options_.secret_namespace, *fresh);
      // Another replica created it first: read and use theirs.
      if (!created && created.error().is(k8s::ErrorKind::AlreadyExists)) continue;
      if (!created) {
        degraded("certificate_secret_write_failed", "create: " + created.error().describe());
        return std::unexpected("create Secret " + describe() + ": " + created.error().describe());
      }
      base::logEvent(base::LogLevel::Info, "certificate Secret created", {{"secret", describe()}});
      secret = std::move(*created);
    } else {
      degraded("certificate_secret_read_failed", got.error().describe());
      return std::unexpected("read Secret " + describe() + ": " + got.error().describe());
    }

    bool conflict = false;
    for (int writes = 0; writes <= kWritesPerRead && !conflict; ++writes) {
      const StoredCertificates stored = detail::decodeCertificateSecret(secret);
      const CertificatePlan plan = planCertificates(stored, options_.hosts, options_.rotation, now);
      if (!plan.write) {
        load(secret);
        return plan.review_at;
      }
      if (writes == kWritesPerRead) break;
      auto data = applyCertificatePlan(plan, stored, options_.rotation, options_.names, now);
      if (!data) {
        degraded("certificate_secret_unusable", data.error());
        load(secret);
        return std::unexpected(data.error());
      }
      k8s::Json updated = secret;  // carries the resourceVersion read: the write's precondition
      detail::encodeCertificateSecret(updated, *data);
      auto written = client_.update(secrets, options_.secret_namespace, updated);
      if (written) {
        base::logEvent(base::LogLevel::Info, "certificate Secret renewed",
                       {{"secret", describe()},
                        {"new_ca", plan.new_ca},
                        {"new_serving_certificate", plan.issue_serving},
                        {"old_cas", plan.old_cas.size()},
                        {"why", joinReasons(plan.reasons)}});
        secret = std::move(*written);
        continue;
      }
      if (written.error().is(k8s::ErrorKind::Conflict)) {
        conflict = true;  // another replica wrote first: read what it wrote
        continue;
      }
      degraded("certificate_secret_write_failed", "update: " + written.error().describe());
      load(secret);
      return std::unexpected("update Secret " + describe() + ": " + written.error().describe());
    }
    if (!conflict) {
      degraded("certificate_secret_unusable", "a written plan still wanted another write");
      load(secret);
      return std::unexpected("Secret " + describe() + " does not settle");
    }
  }
  degraded("certificate_secret_write_failed", "conflicts on every attempt");
  return std::unexpected("Secret " + describe() + ": " + std::to_string(kReadAttempts) +
                         " conflicting writes in a row");
}

void SecretCertificateStore::load(const k8s::Json& secret) {
  auto certificate = detail::servingCertificateFromSecret(secret);
  if (!certificate) {
    degraded("certificate_secret_unusable", certificate.error() + " (keeping the last good one)");
    return;
  }
  const Certificate& leaf = (*certificate)->leaf();
  if (store(*certificate)) {
    base::logEvent(base::LogLevel::Info, "serving certificate loaded",
                   {{"secret", describe()},
                    {"fingerprint", leaf.fingerprint().substr(0, 16)},
                    {"not_after", k8s::formatTime(leaf.notAfter())},
                    {"ca_bundle_size", (*certificate)->caBundle().size()}});
  }
}

}  // namespace shardscaler::certificates
