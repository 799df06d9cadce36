// Keeps the front proxy's settings current: watches the ConfigMap
// kube-system/extension-apiserver-authentication and, on every change, publishes its request-header
// config and CA to the slots the HTTPS server and the handler read. Only reads the API server.
// A change that does not parse never replaces the last good settings.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/metrics_api/metrics_api_handler.h"

namespace shardscaler::metrics_api {

class FrontProxyConfigWatch {
 public:
  // `degraded` is told "front_proxy_config_invalid", "front_proxy_config_without_ca" or
  // "front_proxy_config_deleted" after the warning is logged. References must outlive the watch.
  FrontProxyConfigWatch(k8s::KubeClient& client, const k8s::Clock& clock,
                        RequestHeaderConfigSlot& config,
                        certificates::TrustBundleSlot& client_trust,
                        std::function<void(std::string_view reason)> degraded = {});
  ~FrontProxyConfigWatch();
  FrontProxyConfigWatch(const FrontProxyConfigWatch&) = delete;
  FrontProxyConfigWatch& operator=(const FrontProxyConfigWatch&) = delete;

  void start();
  void requestStop();
  void stop();
  // True once the ConfigMap was read (or found missing) once.
  bool hasSynced() const;

  // Applies one version of the ConfigMap (what the informer calls); public for tests.
  void apply(const nlohmann::json& config_map);

 private:
  RequestHeaderConfigSlot& config_;
  certificates::TrustBundleSlot& client_trust_;
  std::function<void(std::string_view)> degraded_;
  std::unique_ptr<k8s::Informer> informer_;
  std::string applied_version_;  // resourceVersion last applied (informer thread only)
};

}  // namespace shardscaler::metrics_api
