#include "shardscaler/certificates/certificate_options.h"

#include "shardscaler/base/expected.h"

namespace shardscaler::certificates {
namespace {

SecretCertificateStoreOptions storeOptions(const CertificateOptions& options,
                                           const std::function<void(std::string_view)>& degraded) {
  SecretCertificateStoreOptions store;
  store.secret_namespace = options.secret_namespace;
  store.secret_name = options.secret_name;
  store.hosts = options.hosts;
  store.rotation = options.rotation;
  store.poll_period = options.secret_poll_period;
  store.degraded = degraded;
  return store;
}

}  // namespace

Expected<void> validate(const CertificateOptions& options) {
  if (options.certificate_mode == CertificateMode::Directory) {
    if (options.certificate_directory.empty()) {
      return std::unexpected("certificate_directory is required in Directory mode");
    }
    if (options.directory_poll_period <= std::chrono::nanoseconds(0)) {
      return std::unexpected("directory_poll_period must be positive");
    }
    return {};
  }
  if (options.injector_resync_period <= std::chrono::nanoseconds(0)) {
    return std::unexpected("injector_resync_period must be positive");
  }
  return validate(storeOptions(options, {}));
}

std::vector<std::string> serviceHosts(std::string_view service, std::string_view ns,
                                      std::string_view cluster_domain) {
  const std::string base = std::string(service) + "." + std::string(ns);
  std::vector<std::string> hosts{std::string(service), base, base + ".svc"};
  if (!cluster_domain.empty()) hosts.push_back(base + ".svc." + std::string(cluster_domain));
  return hosts;
}

Expected<CertificateParts> makeCertificateParts(
    const CertificateOptions& options, k8s::KubeClient& client,
    std::shared_ptr<const k8s::Clock> clock,
    const std::function<void(std::string_view reason)>& degraded) {
  if (auto ok = validate(options); !ok) return std::unexpected(ok.error());
  CertificateParts parts;
  if (options.certificate_mode == CertificateMode::Directory) {
    parts.files = std::make_shared<FileCertificateSource>(
        clock, FileCertificateSourceOptions{.directory = options.certificate_directory,
                                            .poll_period = options.directory_poll_period,
                                            .degraded = degraded});
    parts.source = parts.files;
    return parts;
  }
  parts.store =
      std::make_shared<SecretCertificateStore>(client, clock, storeOptions(options, degraded));
  parts.source = parts.store;

  CaBundleInjectorOptions injector;
  if (!options.webhook_configuration_name.empty()) {
    injector.targets.push_back(
        CaBundleTarget::validatingWebhookConfiguration(options.webhook_configuration_name));
  }
  for (const auto& api_service : options.api_services) {
    injector.targets.push_back(CaBundleTarget::apiService(
        api_service.name, api_service.service_namespace, api_service.service_name));
  }
  if (!injector.targets.empty()) {
    injector.resync_period = options.injector_resync_period;
    injector.degraded = degraded;
    parts.injector = std::make_unique<CaBundleInjector>(client, parts.source, std::move(clock),
                                                        std::move(injector));
  }
  return parts;
}

}  // namespace shardscaler::certificates
