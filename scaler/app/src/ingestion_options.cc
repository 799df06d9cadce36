// The `shardscaler run` flags of the ingestion monitor (rows of the option table in
// run_options.cc; see option_spec.h).
#include "option_spec.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"

namespace shardscaler::app::detail {
namespace {

Applied checkUrlPattern(std::string_view v) {
  auto pattern = ingestion::UrlPattern::parse(v);
  if (!pattern) return fail(pattern.error());
  return {};
}

Applied checkRegex(std::string_view v) {
  auto policy = ingestion::PrometheusUrlPolicy::make({}, std::string(v));
  if (!policy) return fail(policy.error());
  return {};
}

}  // namespace

const std::vector<RunSpec>& ingestionRunSpecs() {
  using O = RunOptions;
  static const std::vector<RunSpec> specs = {
      {"prometheus-url-allow", "prometheusUrlAllow", "PATTERN",
       "http(s)://*.svc:9090 and http(s)://*.svc.cluster.local:9090",
       "a spec.ingestion.prometheusURL shardscaler may query: SCHEME://HOST[:PORT][/PATH], HOST "
       "may be * or *.SUFFIX, PORT may be *, PATH is a prefix; repeat or separate with commas; "
       "--prometheus-url-allow= allows none (then only the regex)",
       list(&O::prometheus_url_allow, checkUrlPattern)},
      {"prometheus-url-allow-regex", "prometheusUrlAllowRegex", "REGEX", "none",
       "a spec.ingestion.prometheusURL matching this whole (ECMAScript) is allowed too",
       text(&O::prometheus_url_allow_regex, checkRegex)},
      {"shard-metrics-tls-ca-file", "shardMetricsTlsCaFile", "PATH", "the system's CAs",
       "for a target whose pods serve HTTPS (spec.web.tlsConfig): the CA their certificates "
       "chain to; the certificate must name <pod>.<governing service>.<namespace>.svc",
       text(&O::shard_metrics_tls_ca_file)},
      {"shard-metrics-tls-cert-file", "shardMetricsTlsCertFile", "PATH", "none",
       "a client certificate shardscaler presents to the shards' pods (for a target whose "
       "spec.web.tlsConfig.clientAuthType asks for one); with --shard-metrics-tls-key-file",
       text(&O::shard_metrics_tls_cert_file)},
      {"shard-metrics-tls-key-file", "shardMetricsTlsKeyFile", "PATH", "none",
       "the key of --shard-metrics-tls-cert-file", text(&O::shard_metrics_tls_key_file)},
  };
  return specs;
}

}  // namespace shardscaler::app::detail
