#include "shardscaler/app/service.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "shardscaler/app/signals.h"
#include "shardscaler/app/status_endpoints.h"
#include "shardscaler/base/log.h"
#include "shardscaler/controller/plan_applier.h"
#include "shardscaler/controller/shard_set_controller.h"
#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/event_recorder.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/leader_elector.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/telemetry/build_info.h"
#include "shardscaler/telemetry/metrics.h"

#include "guard_server.h"
#include "shardscaler/base/expected.h"
#include "shardscaler/guard/guard_status.h"

namespace shardscaler::app {
namespace {

// Informers and the elector need a moment after the drain to hang up their calls.
constexpr auto kShutdownMargin = std::chrono::seconds(2);

// "HTTP 403 Forbidden", "no answer from the API server https://..." for a failed request.
std::string describeAnswer(int http_status, const std::string& server) {
  if (http_status == 0) return "no answer from the API server " + server;
  std::string text = "HTTP " + std::to_string(http_status);
  switch (http_status) {
    case 401:
      return text + " Unauthorized";
    case 403:
      return text + " Forbidden";
    case 404:
      return text + " Not Found";
    case 429:
      return text + " Too Many Requests";
    default:
      return text;
  }
}

// resource -> {verb, answer} of its last failed list or watch.
using CacheFailures = std::map<std::string, std::pair<std::string, std::string>>;

// "; last error: list a, list b: HTTP 403 Forbidden; list c: no answer from ...", or "".
std::string describeCacheFailures(const CacheFailures& failures) {
  std::vector<std::pair<std::string, std::string>> by_answer;  // answer, requests
  for (const auto& [resource, failure] : failures) {
    const auto& [verb, answer] = failure;
    std::string request = verb;
    request += " ";
    request += resource;
    auto same = std::ranges::find(by_answer, answer, &std::pair<std::string, std::string>::first);
    if (same == by_answer.end()) {
      by_answer.emplace_back(answer, std::move(request));
    } else {
      same->second += ", ";
      same->second += request;
    }
  }
  std::string out;
  for (size_t i = 0; i < by_answer.size(); ++i) {
    out += (i == 0 ? "; last error: " : "; ") + by_answer[i].second + ": " + by_answer[i].first;
  }
  return out;
}

Expected<k8s::KubeConfig> loadConfig(const std::string& kubeconfig) {
  auto config = k8s::loadKubeConfig(k8s::ConfigSources::fromEnvironment(kubeconfig));
  if (!config) return std::unexpected(config.error().message);
  config->user_agent = "shardscaler/" + telemetry::buildInfo().version;
  return *config;
}

// Everything `shardscaler run` owns, in construction order (destruction undoes it).
class Service {
 public:
  Service(const RunOptions& options, k8s::KubeConfig config,
          ingestion::PrometheusUrlPolicy url_policy)
      : options_(options),
        server_(config.server),
        clock_(std::make_shared<k8s::RealClock>()),
        client_(std::move(config),
                k8s::RestClientOptions{
                    .clock = clock_,
                    .observer =
                        [this](const k8s::RequestRecord& r) {
                          metrics_.observeKubeRequest(
                              r.verb, r.resource, r.http_status,
                              std::chrono::duration<double>(r.latency).count());
                          noteCacheRequest(r);
                        },
                    // Every request a worker has in flight finds a kept connection (the
                    // informers' watches hold theirs) rather than paying a TLS handshake on
                    // both sides: a reconcile sends up to four at once (the reads of a round,
                    // or a plan's StatefulSet writes), plus 8 for Events, the lease and the
                    // guard's reads.
                    .max_idle_connections = static_cast<std::size_t>(options.workers) *
                                                controller::PlanApplier::kMaxWritesInFlight +
                                            8,
                    .field_manager = std::string(api::kFieldManager),
                }),
        events_(client_, *clock_, k8s::KubeEventRecorder::Options{.instance = options.identity},
                [this](const std::string& reason) { metrics_.incDegraded(reason); }),
        pods_(std::make_shared<ingestion::ShardPodReader>(
            client_, *clock_,
            ingestion::ShardPodReaderOptions{.tls_ca_file = options.shard_metrics_tls_ca_file,
                                             .tls_cert_file = options.shard_metrics_tls_cert_file,
                                             .tls_key_file = options.shard_metrics_tls_key_file})),
        ingestion_(
            *clock_, &metrics_, [this](const std::string& key) { controller_.enqueue(key); },
            ingestion::IngestionMonitorOptions{.url_policy = url_policy, .pod_source = pods_}),
        controller_(client_, *clock_, events_, &metrics_,
                    controller::ShardSetControllerOptions{
                        .namespaces = options.namespaces,
                        .workers = options.workers,
                        .settle_time = options.settle_time,
                        .pause_ack_timeout = options.pause_ack_timeout,
                        .drain_reload_floor = options.drain_reload_floor,
                        .guard_enforced =
                            [this](const std::string& ns, std::string* why) {
                              auto status = guard::readGuardStatus(
                                  client_, options_.webhook_configuration, ns);
                              if (why != nullptr) *why = status.reason;
                              return status.enforced;
                            },
                        .drain_url_policy = std::move(url_policy),
                        .drain_pods = pods_},
                    &ingestion_),
        http_(StatusEndpoints::Handlers{
            .metrics = [this] { return metrics_.serialize(); },
            .readiness = [this] { return readiness(); },
            .liveness = [this] { return liveness(); },
            .degraded = [this](std::string_view reason) { metrics_.incDegraded(reason); },
        }) {
    if (options.webhook_bind_address) {
      guard_ = std::make_unique<GuardServer>(options, client_, clock_, metrics_, events_);
    }
  }

  int run() {
    if (!listen()) return 1;
    if (auto ok = http_.start(); !ok) {
      base::logEvent(base::LogLevel::Error, "cannot serve", {{"error", ok.error()}});
      return 1;
    }
    // Before the informers and the election: every replica serves the guard, and the controller
    // must know its own identity before it writes anything the guard judges.
    if (guard_) {
      if (auto ok = guard_->start([this] { return stop_.stopRequested(); }); !ok) {
        base::logEvent(base::LogLevel::Error, ok.error());
        guard_->stop();
        http_.stop();
        return 1;
      }
    }
    controller_.startInformers();
    ingestion_.start();
    if (options_.leader_elect) {
      startElection();
    } else {
      startLeading();
    }
    stop_.wait();
    return shutDown();
  }

 private:
  bool listen() {
    struct Listener {
      const std::optional<BindAddress>& address;
      Endpoints endpoints;
    };
    for (const Listener& l : {Listener{options_.metrics_bind_address, {.metrics = true}},
                              Listener{options_.health_probe_bind_address, {.probes = true}}}) {
      if (!l.address) continue;
      auto port = http_.listen(*l.address, l.endpoints);
      if (!port) {
        base::logEvent(base::LogLevel::Error, "cannot serve",
                       {{"endpoints", l.endpoints.metrics ? "/metrics" : "/healthz,/readyz"},
                        {"error", port.error()}});
        return false;
      }
      base::logEvent(base::LogLevel::Info, "serving",
                     {{"endpoints", l.endpoints.metrics ? "/metrics" : "/healthz,/readyz"},
                      {"address", l.address->toString()},
                      {"port", *port}});
    }
    return true;
  }

  // The informers' lists and watches that failed, by resource, so that /readyz can say why a
  // cache does not sync (the informers retry with backoff and only log the error).
  void noteCacheRequest(const k8s::RequestRecord& r) {
    if (r.verb != "list" && r.verb != "watch") return;
    const bool failed = r.http_status == 0 || r.http_status >= 400;
    if (!failed && r.verb == "watch") return;  // a list is what proves the resource readable
    std::lock_guard lock(cache_failures_mutex_);
    if (failed) {
      cache_failures_[std::string(r.resource)] = {std::string(r.verb),
                                                  describeAnswer(r.http_status, server_)};
    } else {
      cache_failures_.erase(std::string(r.resource));
    }
  }

  // What a restart would cure: a server thread that has died.
  Expected<void> liveness() const {
    if (guard_) return guard_->liveness();
    return {};
  }

  Expected<void> readiness() const {
    if (guard_) {
      if (auto ok = guard_->readiness(); !ok) return ok;
    }
    std::string why;
    if (!controller_.hasSynced(&why)) {
      std::lock_guard lock(cache_failures_mutex_);
      why += describeCacheFailures(cache_failures_);
      return std::unexpected(why);
    }
    // A standby replica is ready: it is waiting for the Lease, which is its job.
    if (options_.leader_elect && !election_started_) {
      return std::unexpected("leader election not started");
    }
    return {};
  }

  void startElection() {
    k8s::LeaderElectionConfig config{
        .lease_namespace = options_.leader_election_namespace,
        .lease_name = options_.leader_election_id,
        .identity = options_.identity,
        .lease_duration = options_.lease_duration,
        .renew_deadline = options_.renew_deadline,
        .retry_period = options_.retry_period,
        .callbacks = {
            .on_started_leading = [this] { startLeading(); },
            .on_stopped_leading =
                [this] {
                  metrics_.setLeader(false);
                  controller_.leadershipLost();  // also when a drain is under way
                  if (!stop_.stopRequested()) {
                    // client-go's rule: a replica that lost its Lease exits rather than
                    // risk acting next to the new leader.
                    base::logEvent(base::LogLevel::Error, "leader election lost: stopping",
                                   {{"lease", leaseName()}});
                    lost_lease_ = true;
                    stop_.requestStop();
                  }
                },
            .on_new_leader =
                [](const std::string& identity) {
                  base::logEvent(base::LogLevel::Info, "new leader", {{"leader", identity}});
                },
        },
    };
    elector_ = std::make_unique<k8s::LeaderElector>(client_, std::move(config), *clock_);
    elector_->start();
    election_started_ = true;
    base::logEvent(base::LogLevel::Info, "waiting for the lease",
                   {{"lease", leaseName()}, {"identity", options_.identity}});
  }

  std::string leaseName() const {
    return options_.leader_election_namespace + "/" + options_.leader_election_id;
  }

  void startLeading() {
    metrics_.setLeader(true);
    base::logEvent(base::LogLevel::Info, "starting workers", {{"workers", options_.workers}});
    controller_.startWorkers();
  }

  // SIGTERM: stop taking work, finish the reconcile in flight, release the Lease, exit.
  int shutDown() {
    base::logEvent(base::LogLevel::Info, "shutting down", {{"signal", stop_.signalNumber()}});
    ingestion_.requestStop();  // a query in flight ends within its timeout, beside the drain
    const auto drain = std::max<std::chrono::nanoseconds>(
        options_.shutdown_timeout - kShutdownMargin, std::chrono::seconds(1));
    if (!controller_.stop(drain)) {
      base::logEvent(
          base::LogLevel::Warn, "a reconcile was still running; leaving it",
          {{"drain_seconds", std::chrono::duration_cast<std::chrono::seconds>(drain).count()}});
      metrics_.incDegraded("shutdown_drain_timeout");
    }
    ingestion_.stop();
    if (elector_) elector_->stop();  // releases the Lease when held
    // Last: the API server may route reviews here until the endpoints drop this pod.
    if (guard_) guard_->stop();
    http_.stop();
    base::logEvent(base::LogLevel::Info, "stopped");
    return lost_lease_ ? 1 : 0;
  }

  const RunOptions& options_;
  const std::string server_;
  // Before the client, whose request observer writes them.
  mutable std::mutex cache_failures_mutex_;
  CacheFailures cache_failures_;  // a successful list of a resource removes it
  telemetry::Metrics metrics_;
  std::shared_ptr<k8s::RealClock> clock_;
  k8s::RestClient client_;
  k8s::KubeEventRecorder events_;
  // The shards' own pods, read for ShardSets that name no Prometheus (ingestion and drains).
  std::shared_ptr<ingestion::ShardPodReader> pods_;
  ingestion::IngestionMonitor ingestion_;  // before the controller, which holds a pointer to it
  controller::ShardSetController controller_;
  StatusEndpoints http_;
  std::unique_ptr<GuardServer> guard_;  // when --webhook-bind-address is not "0"
  StopSignal stop_;
  std::unique_ptr<k8s::LeaderElector> elector_;
  std::atomic<bool> election_started_{false};
  std::atomic<bool> lost_lease_{false};
};

}  // namespace

int runService(const RunOptions& options) {
  auto config = loadConfig(options.kubeconfig);
  if (!config) {
    base::logEvent(base::LogLevel::Error, config.error());
    return 1;
  }
  auto url_policy = ingestion::PrometheusUrlPolicy::make(options.prometheus_url_allow,
                                                         options.prometheus_url_allow_regex);
  if (!url_policy) {
    base::logEvent(base::LogLevel::Error, "invalid --prometheus-url-allow",
                   {{"error", url_policy.error()}});
    return 1;
  }
  std::string allowed;
  for (const std::string& pattern : options.prometheus_url_allow) {
    allowed += (allowed.empty() ? "" : ",") + pattern;
  }
  base::logEvent(base::LogLevel::Info, "shardscaler starting",
                 {{"version", telemetry::buildInfo().version},
                  {"commit", telemetry::buildInfo().commit},
                  {"server", config->server},
                  {"kubeconfig", config->origin},
                  {"prometheus_url_allow", allowed},
                  {"prometheus_url_allow_regex", options.prometheus_url_allow_regex}});
  Service service(options, std::move(*config), std::move(*url_policy));
  return service.run();
}

int runPlan(const PlanOptions& options) {
  auto config = loadConfig(options.kubeconfig);
  if (!config) {
    std::fprintf(stderr, "shardscaler: error: %s\n", config.error().c_str());
    return 1;
  }
  k8s::RealClock clock;
  k8s::RestClient client(std::move(*config));
  // Nothing is written: the recorder is never handed an Event, the controller never started.
  k8s::KubeEventRecorder events(client, clock, {});
  // The plan says what a reconcile would do now, guard or fallback included.
  controller::ShardSetController controller(
      client, clock, events, nullptr,
      controller::ShardSetControllerOptions{
          .guard_enforced = [&client](const std::string& ns, std::string* why) {
            auto status = guard::readGuardStatus(
                client, std::string(guard::kDefaultWebhookConfigurationName), ns);
            if (why != nullptr) *why = status.reason;
            return status.enforced;
          }});
  auto plan = controller.dryRun(options.shardset_namespace, options.shardset_name, options.shards);
  if (!plan) {
    std::fprintf(stderr, "shardscaler: error: %s\n", plan.error().describe().c_str());
    return 1;
  }
  std::printf("ShardSet %s/%s, scale to %d (nothing is written):\n%s",
              options.shardset_namespace.c_str(), options.shardset_name.c_str(), options.shards,
              planner::describe(*plan).c_str());
  return 0;
}

}  // namespace shardscaler::app
