#include "shardscaler/ingestion/drain_check.h"

#include <cmath>

#include "shardscaler/base/expected.h"
#include "shardscaler/ingestion/ingestion_query.h"
#include "shardscaler/ingestion/pod_drain.h"

namespace shardscaler::ingestion {
namespace {

using promql::QueryResult;
using promql::Vector;

std::string replaced(std::string text, std::string_view placeholder, std::string_view value) {
  for (size_t at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
  return text;
}

std::string selector(std::string_view ns, std::string_view pod_regex) {
  return "namespace=\"" + escapePromqlString(ns) + "\",pod=~\"" + escapePromqlString(pod_regex) +
         "\"";
}

// The answer as a vector, or why it cannot be read as one.
Expected<const Vector*> vectorOf(const promql::Result<QueryResult>& answer, std::string_view what) {
  if (!answer) return std::unexpected(std::string(what) + " failed: " + answer.error().describe());
  const Vector* vector = answer->vector();
  if (vector == nullptr) {
    return std::unexpected(std::string(what) + " answered a " +
                           std::string(promql::toString(answer->type())) + ", not a vector");
  }
  return vector;
}

// One value a pod: a second one, or one that is not a finite number, makes the pod unreadable.
void setOnce(PodEvidence& pod, std::optional<double>& slot, double value, std::string_view what) {
  if (slot) {
    pod.unreadable = "two series of " + std::string(what) + " in the answer, not one";
  } else if (!std::isfinite(value)) {
    pod.unreadable = std::string(what) + " is not a finite number";
  }
  slot = value;
}

QueueEvidence& queueOf(PodEvidence& pod, const promql::Labels& metric) {
  const std::string name =
      std::string(metric.get("remote_name")) + " (" + std::string(metric.get("url")) + ")";
  for (QueueEvidence& queue : pod.queues) {
    if (queue.name == name) return queue;
  }
  return pod.queues.emplace_back(QueueEvidence{.name = name});
}

// What the answers say of each pod they name.
std::map<std::string, PodEvidence, std::less<>> podsOf(const Vector& up, const Vector& prometheus,
                                                       const Vector& evidence,
                                                       bool custom_condition) {
  std::map<std::string, PodEvidence, std::less<>> pods;
  const auto podOf = [&](const promql::VectorSample& sample) -> PodEvidence* {
    if (!sample.metric.has("pod")) return nullptr;
    return &pods[std::string(sample.metric.get("pod"))];
  };
  for (const auto& sample : up) {
    if (PodEvidence* pod = podOf(sample)) {
      // Two answers for one pod (min by pod gives one) are not "up on every target".
      pod->up = !pod->up && sample.point.value == 1;
    }
  }
  for (const auto& sample : prometheus) {
    if (PodEvidence* pod = podOf(sample)) {
      setOnce(*pod, pod->prometheus_started, sample.point.value, "process_start_time_seconds");
    }
  }
  for (const auto& sample : evidence) {
    PodEvidence* pod = podOf(sample);
    if (pod == nullptr) continue;
    const double value = sample.point.value;
    if (custom_condition) {
      pod->condition_values.push_back(value);
      continue;
    }
    const std::string_view metric = sample.metric.get("__name__");
    if (metric == "prometheus_remote_storage_highest_timestamp_in_seconds") {
      setOnce(*pod, pod->highest_appended, value, metric);
    } else if (metric == "prometheus_remote_storage_samples_pending") {
      setOnce(*pod, queueOf(*pod, sample.metric).samples_pending, value, metric);
    } else if (metric == "prometheus_remote_storage_queue_highest_sent_timestamp_seconds") {
      setOnce(*pod, queueOf(*pod, sample.metric).highest_sent, value, metric);
    }
  }
  return pods;
}

// The time the answers were read at: the evaluation time of the queue answer's samples (the
// querying Prometheus's clock, as its time() would be).
double readAt(const Vector& evidence) {
  if (evidence.empty()) return 0;  // no queue answered: no lag needs it
  return std::chrono::duration<double>(evidence.front().point.timestamp.time_since_epoch()).count();
}

// The survivors' reload from its answer: nullopt when it failed or missed a pod.
std::optional<std::chrono::system_clock::time_point> reloadOf(
    std::span<const SurvivingShard> survivors,
    const std::optional<promql::Result<QueryResult>>& answer) {
  if (!answer) return std::nullopt;
  auto vector = vectorOf(*answer, "the reload query");
  if (!vector) return std::nullopt;
  std::map<std::string, double, std::less<>> reloads;
  for (const auto& sample : **vector) {
    if (!sample.metric.has("pod")) continue;
    // A pod twice reads as not reloaded: its NaN is never a time.
    auto [it, fresh] =
        reloads.try_emplace(std::string(sample.metric.get("pod")), sample.point.value);
    if (!fresh) it->second = std::nan("");
  }
  return survivorsReloadedAt(survivors, reloads);
}

}  // namespace

std::string shardPodRegex(std::string_view stateful_set) {
  return escapeRegex(stateful_set) + "-(0|[1-9][0-9]*)";
}

std::string drainUpQuery(std::string_view ns, std::string_view pod_regex) {
  return "min by (namespace, pod) (up{" + selector(ns, pod_regex) + "})";
}

std::string drainPrometheusQuery(std::string_view ns, std::string_view pod_regex) {
  const std::string sel = "{" + selector(ns, pod_regex) + "}";
  return "max by (namespace, pod) (process_start_time_seconds" + sel +
         " and on (namespace, pod, job, instance) prometheus_build_info" + sel + ")";
}

std::string drainQueuesQuery(std::string_view ns, std::string_view pod_regex) {
  return "max by (__name__, namespace, pod, remote_name, url) ({__name__=~\""
         "prometheus_remote_storage_(samples_pending|queue_highest_sent_timestamp_seconds|"
         "highest_timestamp_in_seconds)\"," +
         selector(ns, pod_regex) + "})";
}

std::string drainReloadQuery(std::string_view ns, std::string_view pod_regex) {
  return "max by (namespace, pod) (prometheus_config_last_reload_success_timestamp_seconds{" +
         selector(ns, pod_regex) + "})";
}

std::string drainConditionQuery(std::string_view condition, std::string_view ns,
                                std::string_view pod_regex) {
  std::string query =
      replaced(std::string(condition), planner::kDrainNamespacePlaceholder, escapePromqlString(ns));
  return replaced(std::move(query), planner::kDrainPodRegexPlaceholder,
                  escapePromqlString(pod_regex));
}

std::map<std::string, planner::DrainReading, std::less<>> readDrains(
    std::span<const DrainShard> shards, std::span<const SurvivingShard> survivors,
    const DrainAnswers& answers, bool custom_condition, std::chrono::seconds max_lag) {
  std::map<std::string, planner::DrainReading, std::less<>> readings;
  auto up = vectorOf(answers.up, "the up query");
  auto prometheus = vectorOf(answers.prometheus, "the Prometheus start query");
  auto evidence =
      vectorOf(answers.evidence, custom_condition ? "the drain condition" : "the queues query");
  if (!up || !prometheus || !evidence) {
    const planner::DrainReading failed{
        .reason = !up           ? up.error()
                  : !prometheus ? prometheus.error()
                                : evidence.error(),
        .invalid_condition = custom_condition && up && prometheus && !answers.evidence &&
                             answers.evidence.error().is(promql::ErrorKind::BadData),
        .failed = true};
    for (const DrainShard& shard : shards) readings[shard.stateful_set] = failed;
    return readings;
  }
  const auto pods = podsOf(**up, **prometheus, **evidence, custom_condition);
  const double read_at = readAt(**evidence);
  const auto reloaded_at = reloadOf(survivors, answers.reloads);
  for (const DrainShard& shard : shards) {
    planner::DrainReading reading = judgeDrain(
        shard, pods, read_at, {.custom_condition = custom_condition, .max_lag = max_lag});
    reading.survivors_reloaded_at = reloaded_at;
    readings[shard.stateful_set] = std::move(reading);
  }
  return readings;
}

DrainChecker::DrainChecker(PromQueryFactory factory, std::chrono::milliseconds timeout,
                           PrometheusUrlPolicy url_policy, std::shared_ptr<ShardMetricsSource> pods)
    : factory_(std::move(factory)),
      timeout_(timeout),
      url_policy_(std::move(url_policy)),
      pods_(std::move(pods)) {}

std::map<std::string, planner::DrainReading, std::less<>> DrainChecker::checkPods(
    const planner::DrainPolicy& policy, const DrainRequest& request) {
  std::map<std::string, planner::DrainReading, std::less<>> readings;
  // Nothing was read, so nothing is known: a failed reading, which never counts toward a timeout.
  const auto failAll = [&](const std::string& why) {
    for (const DrainShard& shard : request.shards) {
      readings[shard.stateful_set] = {.reason = why, .failed = true};
    }
    return readings;
  };
  if (!pods_) return failAll("shardscaler was started without a reader of the shards' pods");
  if (auto why = pods_->unsupported(request.source); !why.empty()) return failAll(why);
  // Every shard of the target at once: the due ones (retained, by the ShardSet's label) and the
  // survivors (attached), whose reloads the drain waits for.
  auto read = pods_->readTarget(request.source);
  if (!read) return failAll(read.error());
  return readPodDrains(request.shards, request.survivors, *read, policy.max_lag);
}

std::shared_ptr<promql::PromQuery> DrainChecker::client(const std::string& url,
                                                        std::string* error) {
  std::lock_guard lock(mutex_);
  if (auto it = clients_.find(url); it != clients_.end()) return it->second;
  auto made = factory_(url, timeout_);
  if (!made) {
    *error = made.error().describe();
    return nullptr;
  }
  clients_[url] = *made;
  return *made;
}

std::map<std::string, planner::DrainReading, std::less<>> DrainChecker::check(
    const planner::DrainPolicy& policy, const DrainRequest& request) {
  std::map<std::string, planner::DrainReading, std::less<>> readings;
  if (request.shards.empty()) return readings;
  if (policy.prometheus_url.empty()) return checkPods(policy, request);
  std::string pods;
  for (const DrainShard& shard : request.shards) {
    pods += (pods.empty() ? "" : "|") + shardPodRegex(shard.stateful_set);
  }
  std::string survivor_pods;
  for (const SurvivingShard& survivor : request.survivors) {
    survivor_pods += (survivor_pods.empty() ? "" : "|") + shardPodRegex(survivor.stateful_set);
  }
  if (auto refused = url_policy_.refusal(policy.prometheus_url)) {
    for (const DrainShard& shard : request.shards) {
      readings[shard.stateful_set] = {.reason = refused->message, .failed = true};
    }
    return readings;
  }
  std::string error;
  auto query = client(policy.prometheus_url, &error);
  const auto no_client = [&] {
    return std::unexpected(promql::makeError(promql::ErrorKind::Transport, "no client: " + error));
  };
  DrainAnswers answers{.up = no_client(), .prometheus = no_client(), .evidence = no_client()};
  if (query) {
    const auto ask = [&](const std::string& promql) {
      return query->query({.query = promql, .timeout = timeout_});
    };
    answers.up = ask(drainUpQuery(request.source.ns, pods));
    answers.prometheus = ask(drainPrometheusQuery(request.source.ns, pods));
    answers.evidence =
        ask(policy.condition ? drainConditionQuery(*policy.condition, request.source.ns, pods)
                             : drainQueuesQuery(request.source.ns, pods));
    if (!survivor_pods.empty())
      answers.reloads = ask(drainReloadQuery(request.source.ns, survivor_pods));
  }
  return readDrains(request.shards, request.survivors, answers, policy.condition.has_value(),
                    policy.max_lag);
}

}  // namespace shardscaler::ingestion
