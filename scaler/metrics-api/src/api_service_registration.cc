#include "shardscaler/metrics_api/api_service_registration.h"

namespace shardscaler::metrics_api {

using Json = nlohmann::json;

namespace {

constexpr std::string_view kInjectCaFrom = "cert-manager.io/inject-ca-from";

}  // namespace

Json apiServiceFor(const ServiceReference& ours, const std::string& ca_bundle_base64,
                   const Json& owner) {
  Json metadata = {{"name", kApiServiceName},
                   {"labels",
                    {{"app.kubernetes.io/name", "shardscaler"},
                     {"app.kubernetes.io/managed-by", "shardscaler"}}}};
  if (owner.is_object()) {
    const Json& meta = owner.value("metadata", Json::object());
    metadata["ownerReferences"] = Json::array({{{"apiVersion", owner.value("apiVersion", "")},
                                                {"kind", owner.value("kind", "")},
                                                {"name", meta.value("name", "")},
                                                {"uid", meta.value("uid", "")}}});
    const Json annotations = meta.value("annotations", Json::object());
    if (annotations.is_object() && annotations.contains(kInjectCaFrom)) {
      metadata["annotations"] = {{kInjectCaFrom, annotations[kInjectCaFrom]}};
    }
  }
  // groupPriorityMinimum and versionPriority as prometheus-adapter and KEDA use them.
  Json spec = {{"group", "external.metrics.k8s.io"},
               {"version", "v1beta1"},
               {"groupPriorityMinimum", 100},
               {"versionPriority", 100},
               {"service", {{"namespace", ours.ns}, {"name", ours.name}, {"port", 443}}}};
  if (!ca_bundle_base64.empty()) spec["caBundle"] = ca_bundle_base64;
  return {{"apiVersion", "apiregistration.k8s.io/v1"},
          {"kind", "APIService"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

std::string notOursMessage(const ApiServiceState& state, const ServiceReference& ours) {
  const std::string left =
      "shardscaler leaves APIService " + std::string(kApiServiceName) + " in place: ";
  const std::string then =
      ", and only one server can own external.metrics.k8s.io. HPAs on "
      "shardscaler_samples_per_second fail while it does; use that server's metrics (KEDA: "
      "deploy/examples/keda), or delete this APIService and shardscaler registers one for " +
      ours.describe();
  switch (state.ownership) {
    case Ownership::Other:
      return left + "it names " + state.owner + then;
    case Ownership::Local:
      return left + "the API server serves the group itself (no spec.service)" + then;
    case Ownership::Ours:
    case Ownership::Missing:
      return {};
  }
  return {};
}

}  // namespace shardscaler::metrics_api
