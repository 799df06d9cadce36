#include "shardscaler/metrics_api/api_service_state.h"

#include "shardscaler/k8s_meta/condition.h"

namespace shardscaler::metrics_api {

using Json = nlohmann::json;

ApiServiceState apiServiceState(const Json& api_service, const ServiceReference& ours) {
  ApiServiceState state;
  if (!api_service.is_object()) return state;
  const Json spec = api_service.value("spec", Json::object());
  const Json service = spec.is_object() ? spec.value("service", Json()) : Json();
  if (!service.is_object()) {
    state.ownership = Ownership::Local;
  } else {
    const ServiceReference ref{service.value("namespace", ""), service.value("name", "")};
    state.owner = ref.describe();
    state.ownership = ref == ours ? Ownership::Ours : Ownership::Other;
  }
  const Json status = api_service.value("status", Json::object());
  const auto conditions =
      k8s::conditionsFromJson(status.is_object() ? status.value("conditions", Json()) : Json());
  if (const k8s::Condition* available = k8s::findStatusCondition(conditions, "Available")) {
    state.available = available->status == k8s::kConditionTrue;
    state.available_reason = available->reason;
    state.available_message = available->message;
  }
  return state;
}

std::string_view toString(Ownership ownership) {
  switch (ownership) {
    case Ownership::Ours:
      return "ours";
    case Ownership::Other:
      return "other";
    case Ownership::Local:
      return "local";
    case Ownership::Missing:
      return "missing";
  }
  return "missing";
}

std::string describe(const ApiServiceState& state, const ServiceReference& ours) {
  std::string name = "APIService " + std::string(kApiServiceName);
  const std::string availability =
      state.available
          ? "available"
          : "not available (" + state.available_reason +
                (state.available_message.empty() ? "" : ": " + state.available_message) + ")";
  switch (state.ownership) {
    case Ownership::Ours:
      return name + " points at shardscaler's Service " + ours.describe() + " and is " +
             availability;
    case Ownership::Other:
      return name + " belongs to " + state.owner + ", not to shardscaler (" + ours.describe() +
             "): only one server can own external.metrics.k8s.io, so HPAs on "
             "shardscaler_samples_per_second fail; use that server's own metrics (for KEDA, "
             "deploy/examples/keda) or delete that APIService for shardscaler to register one "
             "for " +
             ours.describe();
    case Ownership::Local:
      return name +
             " has no spec.service: the API server answers for the group itself, and "
             "shardscaler's metrics are not reachable";
    case Ownership::Missing:
      return name +
             " does not exist: shardscaler registers it with --register-api-service "
             "(deploy/components/external-metrics-api) for HPAs to read its metrics";
  }
  return name;
}

}  // namespace shardscaler::metrics_api
