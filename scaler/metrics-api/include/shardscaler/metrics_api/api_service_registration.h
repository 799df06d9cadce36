// Registering external.metrics.k8s.io for shardscaler: the APIService it creates where none
// exists, and what it says about one another server owns. Pure JSON. Must never offer to create,
// change or remove an APIService that names anything but shardscaler's own Service.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscaler/metrics_api/api_service_state.h"

namespace shardscaler::metrics_api {

// The Warning Event's reason on an APIService shardscaler leaves in place.
inline constexpr std::string_view kApiServiceNotOursReason = "ApiServiceOwnedElsewhere";

// Create only when nothing serves the group; a foreign APIService is never replaced (its server's
// HPAs would lose their metrics), and ours is kept up to date by the caBundle injector.
inline bool shouldCreate(const ApiServiceState& state) {
  return state.ownership == Ownership::Missing;
}

// The APIService kApiServiceName naming `ours` on port 443, with `ca_bundle_base64` ("" leaves it
// to the injector or cert-manager). `owner` (null: none) is a cluster-scoped object of the install
// whose deletion deletes the APIService with it (an ownerReference by uid), and whose
// cert-manager.io/inject-ca-from annotation it carries too.
nlohmann::json apiServiceFor(const ServiceReference& ours, const std::string& ca_bundle_base64,
                             const nlohmann::json& owner);

// The Event's message when `state` is another server's (or the API server's own), e.g.
// "shardscaler leaves APIService v1beta1.external.metrics.k8s.io in place: it names
// keda/keda-operator-metrics-apiserver, and only one server can own external.metrics.k8s.io.
// ...". Empty when shardscaler has nothing to say (ours, or missing).
std::string notOursMessage(const ApiServiceState& state, const ServiceReference& ours);

}  // namespace shardscaler::metrics_api
