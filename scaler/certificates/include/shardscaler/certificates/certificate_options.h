// The certificate settings `shardscaler run` maps its flags onto, and the parts they make.
// Must never start anything by itself: the service decides when to start and stop each part.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/ca_bundle_injector.h"
#include "shardscaler/certificates/certificate_plan.h"
#include "shardscaler/certificates/file_certificate_source.h"
#include "shardscaler/certificates/secret_certificate_store.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::certificates {

enum class CertificateMode {
  Secret,     // shardscaler creates, rotates and publishes its own CA and certificate
  Directory,  // files from a mounted Secret (cert-manager); nothing is written
};

struct CertificateOptions {
  CertificateMode certificate_mode = CertificateMode::Secret;

  // Secret mode.
  std::string secret_namespace;  // required; usually the pod's namespace
  std::string secret_name = "shardscaler-serving-cert";
  // SANs of the serving certificate; usually serviceHosts(<Service>, <namespace>).
  std::vector<std::string> hosts;
  RotationPolicy rotation;
  std::chrono::nanoseconds secret_poll_period = std::chrono::seconds(30);
  // The ValidatingWebhookConfiguration whose caBundle is kept current; "" injects nothing.
  std::string webhook_configuration_name = "shardscaler-shard-guard";
  // APIServices whose spec.caBundle is kept current (the external metrics API), each only while
  // its spec.service names the given Service.
  struct ApiService {
    std::string name;  // v1beta1.external.metrics.k8s.io
    std::string service_namespace;
    std::string service_name;
  };
  std::vector<ApiService> api_services;
  std::chrono::nanoseconds injector_resync_period = std::chrono::seconds(30);

  // Directory mode.
  std::filesystem::path certificate_directory;
  std::chrono::nanoseconds directory_poll_period = std::chrono::seconds(10);
};

// The message names the setting at fault (in its CertificateOptions spelling).
Expected<void> validate(const CertificateOptions& options);

// The names a Service answers to inside the cluster: "<svc>", "<svc>.<ns>", "<svc>.<ns>.svc",
// "<svc>.<ns>.svc.<cluster domain>". The API server calls a webhook Service by "<svc>.<ns>.svc".
std::vector<std::string> serviceHosts(std::string_view service, std::string_view ns,
                                      std::string_view cluster_domain = "cluster.local");

// The parts the options call for, built but not started.
struct CertificateParts {
  // What an HttpServer serves: the store or the file source below.
  std::shared_ptr<CertificateSource> source;
  std::shared_ptr<SecretCertificateStore> store;  // Secret mode
  std::shared_ptr<FileCertificateSource> files;   // Directory mode
  // Secret mode with a webhook configuration or APIServices named. Only the leader needs to run
  // it, though it is safe on every replica.
  std::unique_ptr<CaBundleInjector> injector;
};

// `degraded` is handed to every part (see each part's reasons). `client` must outlive the parts.
Expected<CertificateParts> makeCertificateParts(
    const CertificateOptions& options, k8s::KubeClient& client,
    std::shared_ptr<const k8s::Clock> clock,
    const std::function<void(std::string_view reason)>& degraded = {});

}  // namespace shardscaler::certificates
