#include "shardscaler/metrics_api/front_proxy_config_watch.h"

#include <string>

#include "metrics_api_resources.h"
#include "shardscaler/base/log.h"

namespace shardscaler::metrics_api {

using Json = nlohmann::json;

namespace {

std::string configMapName() {
  return std::string(kAuthenticationConfigMapNamespace) + "/" +
         std::string(kAuthenticationConfigMapName);
}

}  // namespace

FrontProxyConfigWatch::FrontProxyConfigWatch(k8s::KubeClient& client, const k8s::Clock& clock,
                                             RequestHeaderConfigSlot& config,
                                             certificates::TrustBundleSlot& client_trust,
                                             std::function<void(std::string_view)> degraded)
    : config_(config), client_trust_(client_trust), degraded_(std::move(degraded)) {
  k8s::InformerOptions options;
  options.ns = std::string(kAuthenticationConfigMapNamespace);
  // The Role extension-apiserver-authentication-reader names this one object: list and watch
  // are allowed with this field selector only.
  options.field_selector = "metadata.name=" + std::string(kAuthenticationConfigMapName);
  informer_ = std::make_unique<k8s::Informer>(client, detail::configMaps(), options, clock);
  informer_->addEventHandlers(k8s::EventHandlers{
      .on_add = [this](const k8s::ObjectPtr& o) { apply(*o); },
      .on_update = [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { apply(*o); },
      .on_delete =
          [this](const k8s::ObjectPtr&) {
            base::logEvent(base::LogLevel::Warn,
                           "external metrics API: front proxy ConfigMap deleted; keeping its last "
                           "settings until the API server publishes it again",
                           {{"configmap", configMapName()}});
            if (degraded_) degraded_("front_proxy_config_deleted");
          },
  });
}

FrontProxyConfigWatch::~FrontProxyConfigWatch() { stop(); }

void FrontProxyConfigWatch::start() { informer_->start(); }
void FrontProxyConfigWatch::requestStop() { informer_->requestStop(); }
void FrontProxyConfigWatch::stop() { informer_->stop(); }
bool FrontProxyConfigWatch::hasSynced() const { return informer_->hasSynced(); }

void FrontProxyConfigWatch::apply(const Json& config_map) {
  const std::string version =
      config_map.value("metadata", Json::object()).value("resourceVersion", "");
  if (!version.empty() && version == applied_version_) return;  // a resync: nothing new
  auto config = requestHeaderConfigFromConfigMap(config_map);
  if (!config) {
    base::logEvent(
        base::LogLevel::Error,
        "external metrics API: front proxy ConfigMap unusable; keeping the settings read "
        "before",
        {{"configmap", configMapName()}, {"resource_version", version}, {"error", config.error()}});
    if (degraded_) degraded_("front_proxy_config_invalid");
    return;
  }
  applied_version_ = version;
  if (!config->client_ca) {
    base::logEvent(
        base::LogLevel::Error,
        "external metrics API: the front proxy ConfigMap has no requestheader-client-ca-file: "
        "the API server runs without the aggregation layer (--requestheader-client-ca-file, "
        "--proxy-client-cert-file), and every request will be refused with 401",
        {{"configmap", configMapName()}, {"resource_version", version}});
    if (degraded_) degraded_("front_proxy_config_without_ca");
  } else {
    std::string names;
    for (const auto& n : config->allowed_names) names += (names.empty() ? "" : ",") + n;
    base::logEvent(base::LogLevel::Info, "external metrics API: front proxy settings loaded",
                   {{"configmap", configMapName()},
                    {"resource_version", version},
                    {"client_cas", config->client_ca->certificates().size()},
                    {"allowed_names", names},
                    {"user_headers", Json(config->username_headers).dump()},
                    {"group_headers", Json(config->group_headers).dump()}});
  }
  // The CA first: a connection accepted between the two reads at worst the old settings.
  client_trust_.set(config->client_ca);
  config_.set(std::make_shared<const RequestHeaderConfig>(std::move(*config)));
}

}  // namespace shardscaler::metrics_api
