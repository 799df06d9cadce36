// The `shardscaler run` flags of the external metrics API (rows of the option table in
// run_options.cc; see option_spec.h).
#include <algorithm>

#include "option_spec.h"

namespace shardscaler::service::detail {

const std::vector<RunSpec>& metricsApiRunSpecs() {
  static const std::vector<RunSpec> specs = {
      {"external-metrics-api", "externalMetricsApi", Kind::Bool, "", "false",
       "serve external.metrics.k8s.io/v1beta1 (shardscaler_samples_per_second, ...) for HPAs on "
       "the webhook's HTTPS server; needs the aggregation layer and the APIService in deploy/",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto b = parseBool(v);
         if (!b) return std::unexpected(b.error());
         o.external_metrics_api = *b;
         return {};
       }},
      {"external-metrics-service", "externalMetricsService", Kind::String, "[NS/]NAME",
       "shardscaler-metrics-api in the pod's namespace",
       "the Service the APIService v1beta1.external.metrics.k8s.io must name for shardscaler to "
       "keep its caBundle (an APIService of another server is left alone and reported)",
       [](RunOptions& o, std::string_view v) -> Applied {
         const size_t slash = v.find('/');
         const std::string_view name = slash == std::string_view::npos ? v : v.substr(slash + 1);
         if (slash != std::string_view::npos) {
           if (auto ok = checkNamespaceName(v.substr(0, slash)); !ok) return ok;
           o.external_metrics_service_namespace = v.substr(0, slash);
         }
         if (auto ok = checkObjectName(name); !ok) return ok;
         o.external_metrics_service = name;
         return {};
       }},
      {"external-metrics-max-age-intervals", "externalMetricsMaxAgeIntervals", Kind::Int, "N", "3",
       "a ShardSet's rates older than N of its ingestion intervals are an error to the HPA (it "
       "keeps the shard count), never a value",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto n = parseInt(v, 1, 1000);
         if (!n) return std::unexpected(n.error());
         o.external_metrics_max_age_intervals = *n;
         return {};
       }},
      {"external-metrics-min-max-age", "externalMetricsMinMaxAge", Kind::Duration, "DURATION",
       "10s",
       "the age of rates always accepted, whatever the interval (status times are whole "
       "seconds)",
       [](RunOptions& o, std::string_view v) -> Applied {
         auto d = parsePositiveDuration(v);
         if (!d) return std::unexpected(d.error());
         o.external_metrics_min_max_age = *d;
         return {};
       }},
  };
  return specs;
}

Applied finishMetricsApiOptions(RunOptions& options, const std::string& pod_namespace) {
  if (options.external_metrics_service_namespace.empty()) {
    options.external_metrics_service_namespace = pod_namespace;
  }
  if (!options.external_metrics_api) return {};
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

}  // namespace shardscaler::service::detail
