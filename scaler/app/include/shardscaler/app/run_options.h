// The command line and config file of `shardscaler`: sub-commands, flags, YAML keys, defaults.
// Must never exit or print: every bad input comes back as one error message naming the problem.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/base/log.h"
#include "shardscaler/guard/guard_config.h"
#include "shardscaler/guard/webhook_configuration.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/serving/bind_address.h"

namespace shardscaler::app {

// The log settings belong to telemetry; the options carry them under their own names.
using base::LogFormat;
using base::LogLevel;

// A listener address: host "" means every interface (":8080"); port 0 picks a free port.
using BindAddress = serving::BindAddress;
// "host:port", ":port" or "[v6]:port". The error reads like `"x" is not host:port (...)`.
Expected<BindAddress> parseBindAddress(std::string_view text);

// Go's time.ParseDuration syntax: "10s", "1m30s", "1.5h", "300ms", "0". Negative values and
// values beyond ~292 years are errors.
Expected<std::chrono::nanoseconds> parseGoDuration(std::string_view text);
// The shortest Go spelling: 90s -> "1m30s", 1500ms -> "1.5s", 0 -> "0s".
std::string formatGoDuration(std::chrono::nanoseconds d);

// `shardscaler run`.
struct RunOptions {
  std::string config_file;  // the --config file that was read, "" when none
  // --kubeconfig, else the config file's kubeconfig. "" leaves the choice to
  // k8s::loadKubeConfig: $KUBECONFIG (merged as kubectl does), else in-cluster.
  std::string kubeconfig;
  std::vector<std::string> namespaces;  // empty: all namespaces
  // nullopt when set to "0" (the endpoint is disabled, as in controller-runtime).
  std::optional<BindAddress> metrics_bind_address = BindAddress{"", 8080};
  std::optional<BindAddress> health_probe_bind_address = BindAddress{"", 8081};
  bool leader_elect = true;
  std::string leader_election_id = "shardscaler";  // the Lease name
  // Default: the pod's namespace (service account mount), else "default".
  std::string leader_election_namespace;
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
  int workers = 8;  // ShardSets reconciled in parallel: docs/design/reads.md
  LogLevel log_level = LogLevel::Info;
  LogFormat log_format = LogFormat::Text;
  std::string identity;  // Lease holder identity; default "<hostname>_<random uuid>"
  std::chrono::nanoseconds shutdown_timeout = std::chrono::seconds(10);

  // The shard guard: a validating admission webhook every replica serves over HTTPS (docs/design.md
  // docs/design/guard.md). nullopt when --webhook-bind-address is "0": no guard server.
  std::optional<BindAddress> webhook_bind_address = BindAddress{"", 9443};
  // The Secret holding the CA and serving certificate. Namespace default: the pod's, else
  // "default"; --webhook-cert-secret takes NAME or NAMESPACE/NAME.
  std::string webhook_cert_secret_namespace;
  std::string webhook_cert_secret = "shardscaler-webhook-cert";
  // cert-manager mode when set: tls.crt/tls.key/ca.crt are loaded from here and shardscaler
  // writes neither the Secret nor the caBundle.
  std::string webhook_cert_dir;
  // The ValidatingWebhookConfiguration whose caBundle shardscaler keeps current.
  std::string webhook_configuration = std::string(guard::kDefaultWebhookConfigurationName);
  // SANs of the serving certificate (DNS names or IP addresses). Default: the Service's names,
  // shardscaler-webhook.<namespace>.svc and .svc.cluster.local.
  std::vector<std::string> webhook_hosts;
  std::chrono::nanoseconds webhook_cert_validity = std::chrono::hours(24 * 365);
  std::chrono::nanoseconds webhook_ca_validity = std::chrono::hours(24 * 365 * 10);
  // How often every replica re-reads the certificate Secret (rotation by another replica).
  std::chrono::nanoseconds webhook_cert_refresh = std::chrono::seconds(30);
  std::vector<std::string> guard_exempt_users;
  std::vector<std::string> guard_exempt_groups = {"system:masters"};
  std::vector<std::string> guard_cleanup_users = guard::defaultCleanupUsers();
  // shardscaler's own user as the API server sees it; "" finds it (client certificate or
  // TokenReview) at start-up.
  std::string guard_self_user;

  // The external metrics API (external.metrics.k8s.io, docs/design/external-metrics.md), served by
  // the guard's HTTPS server. Off unless --external-metrics-api: it needs the aggregation layer and
  // RBAC.
  bool external_metrics_api = false;
  // The Service the APIService must name for it to be shardscaler's. Namespace default: the
  // pod's; --external-metrics-service takes NAME or NAMESPACE/NAME.
  std::string external_metrics_service_namespace;
  std::string external_metrics_service = "shardscaler-metrics-api";
  // Create the APIService for that Service where none exists (never one another server owns).
  bool register_api_service = false;
  // A ShardSet's rates older than this many ingestion intervals (and at least the floor) are an
  // error to the HPA, never a value.
  int external_metrics_max_age_intervals = 3;
  std::chrono::nanoseconds external_metrics_min_max_age = std::chrono::seconds(10);

  // The Prometheus servers the ingestion monitor may query (a ShardSet's creator writes the URL):
  // a spec.ingestion.prometheusURL must match one of these patterns or the whole regex
  // (ingestion/prometheus_url_policy.h). "" = no regex.
  std::vector<std::string> prometheus_url_allow = ingestion::defaultPrometheusUrlAllow();
  std::string prometheus_url_allow_regex;
  // Reading the shards' own pods when a ShardSet names no Prometheus: for targets whose web port
  // serves HTTPS (spec.web.tlsConfig), the CA their certificates chain to ("" = the system
  // store) and a client certificate to present when one is asked for.
  std::string shard_metrics_tls_ca_file;
  std::string shard_metrics_tls_cert_file;
  std::string shard_metrics_tls_key_file;

  // Transitions without the admission guard (docs/design/lagging-operator.md).
  std::chrono::nanoseconds settle_time = planner::TransitionSafety{}.settle_time;
  std::chrono::nanoseconds pause_ack_timeout = planner::TransitionSafety{}.pause_ack_timeout;
  // The drain's wait for the surviving shards' reload (planner::TransitionSafety::reload_floor).
  std::chrono::nanoseconds drain_reload_floor = planner::TransitionSafety{}.reload_floor;
};

// The Service the deploy manifests put in front of the guard.
inline constexpr std::string_view kWebhookServiceName = "shardscaler-webhook";

// `shardscaler plan --shardset NS/NAME --shards N`.
struct PlanOptions {
  std::string kubeconfig;  // as in RunOptions
  std::string shardset_namespace;
  std::string shardset_name;
  int shards = 0;
};

// `shardscaler release [--namespace NS]... [--timeout DURATION]`: finishes, without a running
// shardscaler, what the finalizer of every ShardSet being deleted would have done.
struct ReleaseOptions {
  std::string kubeconfig;               // as in RunOptions
  std::vector<std::string> namespaces;  // empty = all namespaces
  std::chrono::nanoseconds timeout = std::chrono::minutes(2);
};

struct VersionCommand {};
// --help / -h / `help [command]`: the text to print on stdout, exit 0.
struct HelpCommand {
  std::string text;
};
using Command = std::variant<RunOptions, PlanOptions, ReleaseOptions, VersionCommand, HelpCommand>;

// What defaults depend on outside the command line; fromProcess() reads the real ones, tests build
// their own.
struct OptionsEnvironment {
  std::optional<std::string> pod_namespace;  // the service account's namespace file
  std::string default_identity;              // "<hostname>_<uuid>"

  static OptionsEnvironment fromProcess();
};

// args excludes the program name. The error is one line without the "shardscaler: error: "
// prefix, e.g. `unknown flag "--foo"`, `--workers: "x" is not a number`,
// `config file /x: line 3: unknown key "fooBar"`.
Expected<Command> parseCommandLine(std::span<const std::string_view> args,
                                   const OptionsEnvironment& env);
Expected<Command> parseCommandLine(int argc, const char* const* argv,
                                   const OptionsEnvironment& env);

// The --help texts, listing every flag with its default.
std::string mainHelp();
std::string runHelp();
std::string planHelp();
std::string releaseHelp();
std::string versionHelp();

}  // namespace shardscaler::app
