#include "shardscaler/app/run_options.h"

#include <unistd.h>

#include <array>
#include <boost/uuid/uuid.hpp>
#include <boost/uuid/uuid_generators.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <charconv>
#include <cstring>
#include <fstream>

#include "option_spec.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace detail {
namespace {

Applied checkConfigPath(std::string_view v) {
  if (v.empty()) return fail("empty path");
  return {};
}

// "" leaves the default, the pod's namespace.
Applied checkLeaseNamespace(std::string_view v) {
  return v.empty() ? Applied{} : checkNamespaceName(v);
}

Applied checkLeaderElection(const RunOptions& o) {
  // client-go's leaderelection.NewLeaderElector rules (JitterFactor 1.2).
  if (o.lease_duration <= o.renew_deadline) {
    return fail("--lease-duration (" + formatGoDuration(o.lease_duration) +
                ") must be greater than --renew-deadline (" + formatGoDuration(o.renew_deadline) +
                ")");
  }
  if (static_cast<long double>(o.renew_deadline.count()) <=
      1.2L * static_cast<long double>(o.retry_period.count())) {
    return fail("--renew-deadline (" + formatGoDuration(o.renew_deadline) +
                ") must be greater than 1.2 x --retry-period (" + formatGoDuration(o.retry_period) +
                ")");
  }
  return {};
}

}  // namespace

const std::vector<RunSpec>& runSpecs() {
  using O = RunOptions;
  static const std::vector<RunSpec> base = {
      {"config", "", "PATH", "none",
       "YAML file with these options, keys in camelCase (flags win over the file)",
       text(&O::config_file, checkConfigPath)},
      {"kubeconfig", "kubeconfig", "PATH", "$KUBECONFIG, else in-cluster",
       "kubeconfig file to reach the API server", text(&O::kubeconfig)},
      {"namespace", "namespaces", "NS", "all namespaces",
       "namespace to watch; repeat the flag (or separate with commas) for several",
       list(&O::namespaces, checkNamespaceName, "empty namespace name")},
      {"metrics-bind-address", "metricsBindAddress", "ADDRESS", ":8080",
       "host:port serving /metrics; \"0\" disables it", listener(&O::metrics_bind_address)},
      {"health-probe-bind-address", "healthProbeBindAddress", "ADDRESS", ":8081",
       "host:port serving /healthz and /readyz; \"0\" disables it",
       listener(&O::health_probe_bind_address)},
      {"leader-elect", "leaderElect", "", "true",
       "hold a coordination.k8s.io Lease so only one replica acts", boolean(&O::leader_elect)},
      {"leader-election-id", "leaderElectionId", "NAME", "shardscaler", "name of the Lease",
       text(&O::leader_election_id, checkObjectName)},
      {"leader-election-namespace", "leaderElectionNamespace", "NS",
       "the pod's namespace, else default", "namespace of the Lease",
       text(&O::leader_election_namespace, checkLeaseNamespace)},
      {"lease-duration", "leaseDuration", "DURATION", "15s",
       "how long non-leaders wait before taking over an unrenewed Lease",
       duration(&O::lease_duration)},
      {"renew-deadline", "renewDeadline", "DURATION", "10s",
       "how long the leader keeps retrying to renew before it gives up leadership",
       duration(&O::renew_deadline)},
      {"retry-period", "retryPeriod", "DURATION", "2s",
       "wait between attempts to acquire or renew the Lease", duration(&O::retry_period)},
      {"workers", "workers", "N", "8", "ShardSets reconciled in parallel",
       number(&O::workers, 1, 1024)},
      {"log-level", "logLevel", "LEVEL", "info", "debug, info, warn or error",
       parsed(Kind::String, &O::log_level, base::parseLogLevel)},
      {"log-format", "logFormat", "FORMAT", "text",
       "text (key=value) or json (one object per line)",
       parsed(Kind::String, &O::log_format, base::parseLogFormat)},
      {"identity", "identity", "ID", "<hostname>_<random uuid>",
       "holder identity written into the Lease", text(&O::identity)},
      {"shutdown-timeout", "shutdownTimeout", "DURATION", "10s",
       "on SIGTERM, how long to wait for the reconciles in flight before exiting",
       duration(&O::shutdown_timeout)},
      {"settle-time", "settleTime", "DURATION", "10s",
       "without the admission guard: how long a transition waits after the pause and after the "
       "last detach, so an operator acting on a view this much older still cannot delete a "
       "shard",
       duration(&O::settle_time)},
      {"pause-ack-timeout", "pauseAckTimeout", "DURATION", "30s",
       "without the admission guard: how long to wait for the operator to report a pause before "
       "undoing the transition",
       duration(&O::pause_ack_timeout)},
      {"drain-reload-floor", "drainReloadFloor", "DURATION", "3m",
       "under a drain: how long after a shard left the count it may be deleted without every "
       "surviving shard having been seen to reload its configuration; at least the kubelet's "
       "sync period plus its Secret cache's TTL",
       duration(&O::drain_reload_floor)},
  };
  static const std::vector<RunSpec> specs = [] {
    std::vector<RunSpec> all = base;
    const auto& webhook = webhookRunSpecs();
    all.insert(all.end(), webhook.begin(), webhook.end());
    const auto& metrics_api = metricsApiRunSpecs();
    all.insert(all.end(), metrics_api.begin(), metrics_api.end());
    const auto& ingestion = ingestionRunSpecs();
    all.insert(all.end(), ingestion.begin(), ingestion.end());
    return all;
  }();
  return specs;
}

const std::vector<PlanSpec>& planSpecs() {
  using O = PlanOptions;
  static const std::vector<PlanSpec> specs = {
      {"shardset", "", "NS/NAME", "required", "the ShardSet to plan for",
       objectReference(&O::shardset_namespace, &O::shardset_name, true)},
      {"shards", "", "N", "required", "the shard count to plan a scale to",
       number(&O::shards, 0, 100000)},
      {"kubeconfig", "", "PATH", "$KUBECONFIG, else in-cluster",
       "kubeconfig file to reach the API server", text(&O::kubeconfig)},
  };
  return specs;
}

const std::vector<ReleaseSpec>& releaseSpecs() {
  using O = ReleaseOptions;
  static const std::vector<ReleaseSpec> specs = {
      {"namespace", "", "NS", "all namespaces",
       "namespace of the ShardSets to release; repeat the flag (or separate with commas) for "
       "several",
       list(&O::namespaces, checkNamespaceName, "empty namespace name")},
      {"timeout", "", "DURATION", "2m",
       "how long to work at releasing them before giving up on the ones left",
       duration(&O::timeout)},
      {"kubeconfig", "", "PATH", "$KUBECONFIG, else in-cluster",
       "kubeconfig file to reach the API server", text(&O::kubeconfig)},
  };
  return specs;
}

Applied finishRunOptions(RunOptions& options, const OptionsEnvironment& env) {
  const std::string pod_namespace = env.pod_namespace.value_or("default");
  if (options.leader_election_namespace.empty()) {
    options.leader_election_namespace = pod_namespace;
  }
  if (options.identity.empty()) options.identity = env.default_identity;
  if (options.webhook_cert_secret_namespace.empty()) {
    options.webhook_cert_secret_namespace = pod_namespace;
  }
  if (options.webhook_hosts.empty()) {
    const std::string service = std::string(kWebhookServiceName) + "." + pod_namespace + ".svc";
    options.webhook_hosts = {service, service + ".cluster.local"};
  }
  if (auto ok = finishMetricsApiOptions(options, pod_namespace); !ok) return ok;
  if (options.webhook_cert_validity > options.webhook_ca_validity) {
    return fail("--webhook-cert-validity (" + formatGoDuration(options.webhook_cert_validity) +
                ") must not exceed --webhook-ca-validity (" +
                formatGoDuration(options.webhook_ca_validity) + ")");
  }
  if (options.shard_metrics_tls_cert_file.empty() != options.shard_metrics_tls_key_file.empty()) {
    return fail(
        "--shard-metrics-tls-cert-file and --shard-metrics-tls-key-file go together: give both "
        "or neither");
  }
  if (options.leader_elect) return checkLeaderElection(options);
  return {};
}

}  // namespace detail

using detail::fail;
using detail::inQuotes;

Expected<BindAddress> parseBindAddress(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return fail(inQuotes(text) + " is not host:port (" + why + "; e.g. :8080 or 127.0.0.1:0)");
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with("[")) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("missing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad("missing port");
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad("missing port");
    host = text.substr(0, colon);
    if (host.find(':') != std::string_view::npos) return bad("IPv6 hosts go in brackets");
    port = text.substr(colon + 1);
  }
  if (host.find_first_of(" \t/[]") != std::string_view::npos) return bad("bad host");
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || end != port.data() + port.size() || ec != std::errc()) {
    return bad("port " + inQuotes(port) + " is not a number");
  }
  if (value > 65535) return bad("port " + std::string(port) + " is out of range 0-65535");
  return BindAddress{std::string(host), static_cast<std::uint16_t>(value)};
}

OptionsEnvironment OptionsEnvironment::fromProcess() {
  OptionsEnvironment env;
  std::ifstream ns_file("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (ns_file && std::getline(ns_file, ns)) {
    const auto first = ns.find_first_not_of(" \t\r\n");
    const auto last = ns.find_last_not_of(" \t\r\n");
    if (first != std::string::npos) env.pod_namespace = ns.substr(first, last - first + 1);
  }
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0 || host[0] == '\0') {
    std::strcpy(host.data(), "shardscaler");
  }
  // controller-runtime's default: the hostname makes the holder readable, the UUID (version 4,
  // random) unique across restarts of the same pod.
  env.default_identity =
      std::string(host.data()) + "_" + boost::uuids::to_string(boost::uuids::random_generator()());
  return env;
}

}  // namespace shardscaler::app
