#include "shardscaler/ingestion/drain_check.h"

#include <cmath>
#include <set>

#include "shardscaler/base/expected.h"
#include "shardscaler/ingestion/ingestion_query.h"

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

// Each pod's values in a vector answer (a pod twice keeps both).
std::map<std::string, std::vector<double>> byPod(const Vector& vector) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& sample : vector) {
    if (sample.metric.has("pod"))
      out[std::string(sample.metric.get("pod"))].push_back(sample.point.value);
  }
  return out;
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

std::string fixed(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0fs", seconds);
  return text;
}

}  // namespace

std::string shardPodRegex(std::string_view stateful_set) {
  return escapeRegex(stateful_set) + "-(0|[1-9][0-9]*)";
}

std::string drainUpQuery(std::string_view ns, std::string_view pod_regex) {
  return "min by (namespace, pod) (up{" + selector(ns, pod_regex) + "})";
}

std::string drainLagQuery(std::string_view ns, std::string_view pod_regex) {
  const std::string sel = "{" + selector(ns, pod_regex) + "}";
  return "max by (namespace, pod) ("
         "(time() - (prometheus_remote_storage_queue_highest_sent_timestamp_seconds" +
         sel + " and prometheus_remote_storage_samples_pending" + sel +
         " > 0)) or (prometheus_remote_storage_highest_timestamp_in_seconds" + sel +
         " - ignoring (remote_name, url) group_right "
         "prometheus_remote_storage_queue_highest_sent_timestamp_seconds" +
         sel + ") or (prometheus_remote_storage_highest_timestamp_in_seconds" + sel +
         " - ignoring (remote_name, url) group_right () "
         "(0 * (prometheus_remote_storage_samples_pending" +
         sel + " > 0))) or (0 * (prometheus_remote_storage_samples_pending" + sel + " == 0)))";
}

std::string drainConditionQuery(std::string_view condition, std::string_view ns,
                                std::string_view pod_regex) {
  std::string query = replaced(std::string(condition), retention::kDrainNamespacePlaceholder,
                               escapePromqlString(ns));
  return replaced(std::move(query), retention::kDrainPodRegexPlaceholder,
                  escapePromqlString(pod_regex));
}

retention::DrainReading readDrain(const DrainShard& shard, const DrainAnswers& answers,
                                  bool custom_condition, std::chrono::seconds max_lag) {
  retention::DrainReading reading;
  auto up = vectorOf(answers.up, "the up query");
  if (!up) {
    reading.reason = up.error();
    reading.failed = true;
    return reading;
  }
  auto evidence =
      vectorOf(answers.evidence, custom_condition ? "the drain condition" : "the lag query");
  if (!evidence) {
    reading.reason = evidence.error();
    reading.failed = true;
    reading.invalid_condition = custom_condition && !answers.evidence &&
                                answers.evidence.error().is(promql::ErrorKind::BadData);
    return reading;
  }
  const auto scraped = byPod(**up);
  const auto found = byPod(**evidence);
  double largest_lag = 0;
  bool measured = false;
  std::string lagging;  // the first pod over maxLag
  if (shard.replicas <= 0) {
    reading.reason =
        "StatefulSet " + shard.stateful_set + " has no replicas: no pod says its data was shipped";
    return reading;
  }
  for (int32_t replica = 0; replica < shard.replicas; ++replica) {
    const std::string pod = shard.stateful_set + "-" + std::to_string(replica);
    const auto up_values = scraped.find(pod);
    if (up_values == scraped.end() || up_values->second.size() != 1 ||
        up_values->second.front() != 1) {
      reading.reason = "pod " + pod + " is not scraped (up " +
                       (up_values == scraped.end() ? "missing" : "not 1 for all its targets") +
                       "), so nothing says its data was shipped";
      return reading;
    }
    const auto values = found.find(pod);
    if (values == found.end()) {
      if (custom_condition) {
        reading.reason = "the drain condition does not hold for pod " + pod;
        return reading;
      }
      continue;  // scraped, no remote-write queue: nothing to ship
    }
    if (values->second.size() != 1) {
      reading.reason = "pod " + pod + " has " + std::to_string(values->second.size()) +
                       " series in the answer, not one";
      reading.failed = true;
      return reading;
    }
    const double value = values->second.front();
    if (!std::isfinite(value)) {
      reading.reason = "pod " + pod + " has a value that is not a finite number";
      reading.failed = true;
      return reading;
    }
    if (!custom_condition) {
      measured = true;
      largest_lag = std::max(largest_lag, value);
      if (value > static_cast<double>(max_lag.count()) && lagging.empty()) {
        // The lag itself is in status (lagSeconds) and the metrics: a reason that changed with
        // every reading would make a Degraded message, and an Event, out of each poll.
        lagging = "pod " + pod + " lags behind in remote write by more than " +
                  fixed(static_cast<double>(max_lag.count())) + " (maxLagSeconds)";
      }
    }
  }
  if (measured) reading.lag_seconds = largest_lag;
  reading.reason = lagging;
  reading.drained = lagging.empty();
  return reading;
}

DrainChecker::DrainChecker(PromQueryFactory factory, std::chrono::milliseconds timeout,
                           PrometheusUrlPolicy url_policy)
    : factory_(std::move(factory)), timeout_(timeout), url_policy_(std::move(url_policy)) {}

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

std::map<std::string, retention::DrainReading, std::less<>> DrainChecker::check(
    const retention::DrainPolicy& policy, const std::string& ns,
    std::span<const DrainShard> shards) {
  std::map<std::string, retention::DrainReading, std::less<>> readings;
  if (shards.empty()) return readings;
  std::string pods;
  for (const DrainShard& shard : shards) {
    pods += (pods.empty() ? "" : "|") + shardPodRegex(shard.stateful_set);
  }
  if (auto refused = url_policy_.refusal(policy.prometheus_url)) {
    for (const DrainShard& shard : shards) {
      readings[shard.stateful_set] = {.reason = refused->message, .failed = true};
    }
    return readings;
  }
  std::string error;
  auto query = client(policy.prometheus_url, &error);
  DrainAnswers answers{
      .up = std::unexpected(promql::makeError(promql::ErrorKind::Transport, "no client: " + error)),
      .evidence =
          std::unexpected(promql::makeError(promql::ErrorKind::Transport, "no client: " + error))};
  if (query) {
    answers.up = query->query({.query = drainUpQuery(ns, pods), .timeout = timeout_});
    const std::string evidence = policy.condition ? drainConditionQuery(*policy.condition, ns, pods)
                                                  : drainLagQuery(ns, pods);
    answers.evidence = query->query({.query = evidence, .timeout = timeout_});
  }
  for (const DrainShard& shard : shards) {
    readings[shard.stateful_set] =
        readDrain(shard, answers, policy.condition.has_value(), policy.max_lag);
  }
  return readings;
}

}  // namespace shardscaler::ingestion
