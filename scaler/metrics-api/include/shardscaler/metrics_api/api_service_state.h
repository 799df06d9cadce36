// Who serves external.metrics.k8s.io in this cluster: the APIService
// v1beta1.external.metrics.k8s.io may point at shardscaler, at another server (KEDA,
// prometheus-adapter), or be missing. Pure. Must never call a group ours unless the APIService
// names shardscaler's own Service.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::metrics_api {

inline constexpr std::string_view kApiServiceName = "v1beta1.external.metrics.k8s.io";

struct ServiceReference {
  std::string ns;
  std::string name;
  std::string describe() const { return ns + "/" + name; }
  friend bool operator==(const ServiceReference&, const ServiceReference&) = default;
};

enum class Ownership {
  Ours,     // spec.service is shardscaler's Service
  Other,    // spec.service is another Service (KEDA, prometheus-adapter, ...)
  Local,    // no spec.service: served by the API server itself
  Missing,  // no such APIService: nothing serves the group
};

struct ApiServiceState {
  Ownership ownership = Ownership::Missing;
  std::string owner;  // "ns/name" of spec.service, "" when Local or Missing
  // The Available condition (the aggregator's checks of the backend); false when absent.
  bool available = false;
  std::string available_reason;
  std::string available_message;
  friend bool operator==(const ApiServiceState&, const ApiServiceState&) = default;
};

// `api_service`: the object, or null JSON when it does not exist.
ApiServiceState apiServiceState(const nlohmann::json& api_service, const ServiceReference& ours);

// One line for logs and for readiness, e.g. "APIService v1beta1.external.metrics.k8s.io belongs
// to keda/keda-operator-metrics-apiserver, not to shardscaler (monitoring/shardscaler-metrics-api):
// HPAs on external metrics read from that server; ...".
std::string describe(const ApiServiceState& state, const ServiceReference& ours);

std::string_view toString(Ownership ownership);

}  // namespace shardscaler::metrics_api
