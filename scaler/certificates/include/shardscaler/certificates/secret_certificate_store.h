// The serving certificate and its CA kept in one Secret that every replica reads and any replica
// may renew: created when missing, replaced when garbage, rotated before expiry. Every write has a
// resourceVersion precondition; it never deletes the Secret nor drops data keys it does not own.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_plan.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/k8s_client/backoff.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::certificates {

namespace detail {
class PeriodicTask;
}

struct SecretCertificateStoreOptions {
  std::string secret_namespace;
  std::string secret_name;
  // The serving certificate's SANs: the Service's DNS names, and any IP a client dials.
  std::vector<std::string> hosts;
  CertificateNames names;
  RotationPolicy rotation;
  // Every replica re-reads the Secret this often (and when something comes due sooner).
  std::chrono::nanoseconds poll_period = std::chrono::seconds(30);
  // After a failed read or write the next round comes 250 ms later, then twice as long after
  // each further failure, at most this long.
  std::chrono::nanoseconds retry_period = std::chrono::seconds(5);
  // Labels of a Secret this store creates.
  std::map<std::string, std::string> labels = {{"app.kubernetes.io/managed-by", "shardscaler"}};
  // Told of each degraded path after its warning is logged: "certificate_secret_read_failed",
  // "certificate_secret_write_failed", "certificate_secret_unusable".
  std::function<void(std::string_view reason)> degraded;
};

// Checks names, hosts and the rotation policy; the message names the field at fault.
Expected<void> validate(const SecretCertificateStoreOptions& options);

class SecretCertificateStore final : public SlotBackedCertificateSource {
 public:
  // Secret keys: tls.crt, tls.key (the serving certificate), ca.crt (the CA bundle clients trust:
  // the signing CA first, then older CAs still needed), ca.key (the signing CA's key, so that any
  // replica can renew). Needs get, create and update on that Secret.
  SecretCertificateStore(k8s::KubeClient& client, std::shared_ptr<const k8s::Clock> clock,
                         SecretCertificateStoreOptions options);
  ~SecretCertificateStore() override;  // stop()
  SecretCertificateStore(const SecretCertificateStore&) = delete;
  SecretCertificateStore& operator=(const SecretCertificateStore&) = delete;

  // One round: read the Secret (create it when missing), renew what is due (re-reading on a
  // conflict), and load what it holds. Safe to call from any thread, also while started. On an
  // error the certificate loaded before stays in use.
  Expected<void> sync();

  // Syncs now and then on a background thread, every poll_period or when something comes due.
  void start();
  void stop();

 private:
  Expected<SystemTime> syncLocked();
  Expected<k8s::Json> create(SystemTime now);
  void load(const k8s::Json& secret);
  void degraded(std::string_view reason, const std::string& detail) const;
  std::string describe() const;

  k8s::KubeClient& client_;
  std::shared_ptr<const k8s::Clock> clock_;
  SecretCertificateStoreOptions options_;
  std::mutex sync_mutex_;  // one round at a time
  // The background loop's retries after failed rounds; only the task's thread uses it.
  k8s::ExponentialBackoff retry_backoff_;
  std::unique_ptr<detail::PeriodicTask> task_;
};

}  // namespace shardscaler::certificates
