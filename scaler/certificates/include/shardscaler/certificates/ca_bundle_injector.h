// Keeps the caBundle fields of webhook configurations and APIServices equal to the CA bundle of a
// certificate source: on start, on every change, and periodically (a re-applied manifest blanks
// them). Writes are idempotent JSON patches with a resourceVersion precondition; it never creates
// or deletes the objects it patches, nor touches any other field.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/certificate_source.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::certificates {

namespace detail {
class PeriodicTask;
}

// A cluster-scoped object and the fields in it that hold a base64 PEM CA bundle.
struct CaBundleTarget {
  k8s::Resource resource;
  std::string name;
  // JSON pointers (RFC 6901) to the caBundle fields. A "*" segment stands for every element of
  // the array there: "/webhooks/*/clientConfig/caBundle".
  std::vector<std::string> paths;
  // Fields (JSON pointer, value) the object must hold for its caBundle to be ours to write: an
  // APIService that points at another server's Service (KEDA, prometheus-adapter) is left alone,
  // since our CA there would break that server's API.
  std::vector<std::pair<std::string, std::string>> required;

  std::string describe()
      const;  // "validatingwebhookconfigurations.admissionregistration.k8s.io/v1 shardscaler"

  static CaBundleTarget validatingWebhookConfiguration(std::string name);
  static CaBundleTarget mutatingWebhookConfiguration(std::string name);
  // apiregistration.k8s.io/v1 APIService, spec.caBundle; with a service namespace and name, only
  // while spec.service names that Service.
  static CaBundleTarget apiService(std::string name, std::string service_namespace = {},
                                   std::string service_name = {});
};

// The JSON patch that makes every field the target names in `object` equal to `bundle_base64`,
// with `object`'s resourceVersion as precondition (the server answers 409 when it moved on); or
// nullopt when they already are equal. A path whose parent is missing, or that goes through
// something that is not an object or an array, is an error naming the path.
// Why the caBundle of `object` is not ours to write (a required field differs), or nullopt.
std::optional<std::string> foreignTarget(const k8s::Json& object, const CaBundleTarget& target);

Expected<std::optional<k8s::Json>> caBundlePatch(const k8s::Json& object,
                                                 const CaBundleTarget& target,
                                                 const std::string& bundle_base64);

struct CaBundleInjectorOptions {
  std::vector<CaBundleTarget> targets;
  // Every target is re-checked this often (and at once when the bundle changes).
  std::chrono::nanoseconds resync_period = std::chrono::seconds(30);
  // After a failure, the next attempt comes this soon.
  std::chrono::nanoseconds retry_period = std::chrono::seconds(5);
  // Told of each degraded path after its warning is logged: "ca_bundle_unavailable",
  // "ca_bundle_target_missing", "ca_bundle_read_failed", "ca_bundle_write_failed",
  // "ca_bundle_target_foreign" (once each time a target becomes someone else's).
  std::function<void(std::string_view reason)> degraded;
};

class CaBundleInjector {
 public:
  // The bundle is source->current()->caBundlePem(). Needs get and patch on each target.
  CaBundleInjector(k8s::KubeClient& client, std::shared_ptr<CertificateSource> source,
                   std::shared_ptr<const k8s::Clock> clock, CaBundleInjectorOptions options);
  ~CaBundleInjector();  // stop()
  CaBundleInjector(const CaBundleInjector&) = delete;
  CaBundleInjector& operator=(const CaBundleInjector&) = delete;

  // Checks every target once and patches those that differ (re-reading on a conflict). Returns
  // how many objects it wrote; an error names every target that failed (the others are done).
  Expected<int> injectOnce();

  // Injects now, then on every change of the source and every resync_period, on a background
  // thread, until stop().
  void start();
  void stop();

 private:
  Expected<bool> injectInto(const CaBundleTarget& target, const std::string& bundle_base64);
  void degraded(std::string_view reason, const std::string& detail) const;

  k8s::KubeClient& client_;
  std::shared_ptr<CertificateSource> source_;
  std::shared_ptr<const k8s::Clock> clock_;
  CaBundleInjectorOptions options_;
  std::unique_ptr<detail::PeriodicTask> task_;
  std::optional<std::uint64_t> listener_;
  std::mutex foreign_mutex_;
  std::map<std::string, std::string> foreign_;  // target -> why it is not ours, as last reported
};

}  // namespace shardscaler::certificates
