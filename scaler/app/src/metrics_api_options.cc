// The `shardscaler run` flags of the external metrics API (rows of the option table in
// run_options.cc; see option_spec.h).
#include <algorithm>

#include "option_spec.h"

namespace shardscaler::app::detail {

const std::vector<RunSpec>& metricsApiRunSpecs() {
  using O = RunOptions;
  static const std::vector<RunSpec> specs = {
      {"external-metrics-api", "externalMetricsApi", "", "false",
       "serve external.metrics.k8s.io/v1beta1 (shardscaler_samples_per_second, ...) for HPAs on "
       "the webhook's HTTPS server; needs the aggregation layer and the APIService "
       "(--register-api-service)",
       boolean(&O::external_metrics_api)},
      {"external-metrics-service", "externalMetricsService", "[NS/]NAME",
       "shardscaler-metrics-api in the pod's namespace",
       "the Service the APIService v1beta1.external.metrics.k8s.io must name for shardscaler to "
       "keep its caBundle (an APIService of another server is left alone and reported)",
       objectReference(&O::external_metrics_service_namespace, &O::external_metrics_service)},
      {"register-api-service", "registerApiService", "", "false",
       "create the APIService v1beta1.external.metrics.k8s.io naming --external-metrics-service "
       "where none exists; one that names another server (KEDA, prometheus-adapter) is left in "
       "place, and a Warning Event on it says why",
       boolean(&O::register_api_service)},
      {"external-metrics-max-age-intervals", "externalMetricsMaxAgeIntervals", "N", "3",
       "a ShardSet's rates older than N of its ingestion intervals are an error to the HPA (it "
       "keeps the shard count), never a value",
       number(&O::external_metrics_max_age_intervals, 1, 1000)},
      {"external-metrics-min-max-age", "externalMetricsMinMaxAge", "DURATION", "10s",
       "the age of rates always accepted, whatever the interval (status times are whole "
       "seconds)",
       duration(&O::external_metrics_min_max_age)},
  };
  return specs;
}

Applied finishMetricsApiOptions(RunOptions& options, const std::string& pod_namespace) {
  if (options.external_metrics_service_namespace.empty()) {
    options.external_metrics_service_namespace = pod_namespace;
  }
  if (!options.external_metrics_api) {
    if (options.register_api_service) {
      return fail(
          "--register-api-service registers the external metrics API: it needs "
          "--external-metrics-api");
    }
    return {};
  }
  if (!options.webhook_bind_address) {
    return fail(
        "--external-metrics-api is served by the webhook's HTTPS server: it needs "
        "--webhook-bind-address (not \"0\")");
  }
  // The aggregator dials <service>.<namespace>.svc and checks the serving certificate for it.
  const std::string service =
      options.external_metrics_service + "." + options.external_metrics_service_namespace + ".svc";
  for (const std::string& host : {service, service + ".cluster.local"}) {
    if (std::ranges::find(options.webhook_hosts, host) == options.webhook_hosts.end()) {
      options.webhook_hosts.push_back(host);
    }
  }
  return {};
}

}  // namespace shardscaler::app::detail
