#include "shardscaler/ingestion/ingestion_monitor.h"

#include <algorithm>
#include <cctype>

#include "shardscaler/base/log.h"
#include "shardscaler/ingestion/ingestion_query.h"
#include "shardscaler/ingestion/ingestion_result.h"
#include "shardscaler/k8s_meta/time.h"
#include "shardscaler/promql_client/prometheus_client.h"

namespace shardscaler::ingestion {
namespace {

using namespace std::chrono_literals;

// "QueryTimeout" -> "ingestion_query_timeout", "PrometheusURLNotAllowed" ->
// "ingestion_prometheus_url_not_allowed", for the degraded-events counter: a word starts at a
// capital after a small letter, or at the last capital of a run followed by a small one.
std::string degradedReason(std::string_view reason) {
  auto upper = [&](size_t i) {
    return i < reason.size() && std::isupper(static_cast<unsigned char>(reason[i])) != 0;
  };
  std::string out = "ingestion";
  for (size_t i = 0; i < reason.size(); ++i) {
    if (upper(i) && (i == 0 || !upper(i - 1) || (i + 1 < reason.size() && !upper(i + 1)))) {
      out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(reason[i])));
  }
  return out;
}

double secondsBetween(k8s::Clock::MonotonicTime from, k8s::Clock::MonotonicTime to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

PromQueryFactory prometheusClientFactory() {
  return
      [](const std::string& base_url,
         std::chrono::milliseconds timeout) -> promql::Result<std::shared_ptr<promql::PromQuery>> {
        promql::ClientOptions options;
        options.base_url = base_url;
        options.timeout = timeout;
        options.connect_timeout = std::min<std::chrono::milliseconds>(timeout, 5s);
        options.max_idle_connections = 2;
        auto client = promql::PrometheusClient::create(std::move(options));
        if (!client) return std::unexpected(client.error());
        return std::shared_ptr<promql::PromQuery>(std::move(*client));
      };
}

IngestionMonitor::IngestionMonitor(const k8s::Clock& clock, telemetry::Metrics* metrics,
                                   Notify on_result, IngestionMonitorOptions options)
    : clock_(clock),
      metrics_(metrics),
      on_result_(std::move(on_result)),
      options_(std::move(options)) {
  if (!options_.client_factory) options_.client_factory = prometheusClientFactory();
  options_.workers = std::max(options_.workers, 1);
  options_.jitter = std::max(options_.jitter, 0.0);
}

IngestionMonitor::~IngestionMonitor() { stop(); }

void IngestionMonitor::start() {
  std::lock_guard lock(mutex_);
  if (!workers_.empty() || stopping_) return;
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker(); });
}

void IngestionMonitor::requestStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    ++version_;
  }
  changed_.notify_all();
}

void IngestionMonitor::stop() {
  requestStop();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mutex_);
    workers.swap(workers_);
  }
  for (auto& w : workers) {
    if (w.joinable()) w.join();
  }
}

void IngestionMonitor::track(const std::string& key, const IngestionTarget& target) {
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = entries_.try_emplace(key);
    Entry& entry = it->second;
    if (!inserted && entry.target == target) return;
    entry.target = target;
    entry.generation = next_generation_++;
    entry.due = clock_.monotonicNow();
    dropUnusedClientsLocked();
    ++version_;
    base::logEvent(
        base::LogLevel::Info, inserted ? "ingestion tracking" : "ingestion retargeted",
        {{"key", key},
         {"target", std::string(planner::toString(target.kind)) + "/" + target.target_name},
         {"interval_ms", target.interval.count()},
         {"prometheus", target.prometheus_url},
         {"query_override", !target.query.empty()}});
  }
  changed_.notify_all();
}

void IngestionMonitor::untrack(const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    if (metrics_ != nullptr)
      metrics_->clearIngestion(it->second.target.ns, it->second.target.shard_set);
    entries_.erase(it);
    dropUnusedClientsLocked();
    ++version_;
    base::logEvent(base::LogLevel::Info, "ingestion untracked", {{"key", key}});
  }
  changed_.notify_all();
}

std::optional<IngestionSnapshot> IngestionMonitor::snapshot(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.snapshot;
}

std::vector<std::string> IngestionMonitor::trackedKeys() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) keys.push_back(key);
  return keys;
}

std::optional<k8s::Clock::MonotonicTime> IngestionMonitor::nextQueryAt() const {
  std::lock_guard lock(mutex_);
  std::optional<k8s::Clock::MonotonicTime> next;
  for (const auto& [key, entry] : entries_) {
    if (entry.in_flight_generation == 0 && (!next || entry.due < *next)) next = entry.due;
  }
  return next;
}

void IngestionMonitor::worker() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    auto next = nextDueLocked();
    const auto now = clock_.monotonicNow();
    if (next != entries_.end() && next->second.due <= now) {
      Job job = startJobLocked(next->first, next->second);
      lock.unlock();
      JobResult result = runJob(job);
      lock.lock();
      const bool current = finishJobLocked(job, std::move(result), now);
      ++version_;
      changed_.notify_all();
      if (current && !stopping_ && on_result_) {
        lock.unlock();
        on_result_(job.key);
        lock.lock();
      }
      continue;
    }
    const auto deadline =
        next == entries_.end() ? k8s::Clock::MonotonicTime::max() : next->second.due;
    const uint64_t seen = version_;
    clock_.waitUntil(lock, changed_, deadline, [&] { return stopping_ || version_ != seen; });
  }
}

std::map<std::string, IngestionMonitor::Entry>::iterator IngestionMonitor::nextDueLocked() {
  auto best = entries_.end();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.in_flight_generation != 0) continue;
    if (best == entries_.end() || it->second.due < best->second.due) best = it;
  }
  return best;
}

IngestionMonitor::Job IngestionMonitor::startJobLocked(const std::string& key, Entry& entry) {
  Job job{.key = key, .generation = entry.generation, .target = entry.target};
  entry.in_flight_generation = entry.generation;
  if (entry.target.prometheus_url.empty()) return job;  // the shards' own pods
  if (auto refused = options_.url_policy.refusal(entry.target.prometheus_url)) {
    job.refusal = std::move(refused);
    return job;
  }
  const ClientKey client_key{entry.target.prometheus_url, queryTimeout(entry.target)};
  if (auto it = clients_.find(client_key); it != clients_.end()) {
    job.client = it->second;
    return job;
  }
  auto made = options_.client_factory(client_key.first, client_key.second);
  if (made) {
    job.client = *made;
    clients_.emplace(client_key, std::move(*made));
  } else {
    job.client_error = std::move(made.error());
  }
  return job;
}

IngestionMonitor::JobResult IngestionMonitor::readPods(const Job& job) {
  JobResult result;
  IngestionSnapshot& snapshot = result.snapshot;
  snapshot.last_update = k8s::formatTime(clock_.now());
  const IngestionTarget& t = job.target;
  auto fail = [&](std::string_view reason, std::string message) {
    snapshot.error = std::move(message);
    snapshot.error_reason = std::string(reason);
    base::logEvent(base::LogLevel::Warn, "ingestion pod reads failed",
                   {{"key", t.ns + "/" + t.shard_set},
                    {"reason", snapshot.error_reason},
                    {"error", snapshot.error}});
    if (metrics_ != nullptr) metrics_->incDegraded(degradedReason(snapshot.error_reason));
    return result;
  };
  if (!options_.pod_source) {
    return fail(kReasonShardPodsUnreadable, "shardscaler runs without a reader of shard pods");
  }
  const ShardSource source{.ns = t.ns,
                           .kind = t.kind,
                           .target_name = t.target_name,
                           .shard_set = t.shard_set,
                           .tls = t.web_tls};
  if (auto why = options_.pod_source->unsupported(source); !why.empty()) {
    return fail(kReasonUnsupportedWebTLS, why);
  }
  auto shards = options_.pod_source->readTarget(source);
  if (!shards) return fail(kReasonShardPodsUnlisted, shards.error());
  for (const ShardReading& shard : *shards) {
    for (const PodReading& r : shard.readings) {
      if (r.metrics) continue;
      base::logEvent(
          base::LogLevel::Warn, "shard pod unreadable",
          {{"key", t.ns + "/" + t.shard_set}, {"pod", r.pod.name}, {"error", r.metrics.error()}});
      if (metrics_ != nullptr) metrics_->incDegraded("ingestion_pod_unreadable");
    }
  }
  result.shards = std::move(*shards);
  return result;
}

std::optional<IngestionSnapshot> IngestionMonitor::podSnapshotLocked(
    Entry& entry, IngestionSnapshot snapshot, const std::vector<ShardReading>& shards) {
  const IngestionTarget& t = entry.target;
  std::map<std::string, RateWindow> windows;
  bool awaiting = false;
  std::string first_error;
  for (const ShardReading& shard : shards) {
    double sum = 0;
    int pods = 0;
    for (const PodReading& r : shard.readings) {
      if (!r.metrics || !r.metrics->samples_appended) {
        if (first_error.empty()) {
          first_error = r.metrics ? "pod " + r.pod.name + " has no " +
                                        std::string(samplesAppendedMetric(t.kind))
                                  : r.metrics.error();
        }
        continue;
      }
      auto it = entry.pod_windows.find(r.pod.uid);
      RateWindow window = it != entry.pod_windows.end() ? std::move(it->second)
                                                        : RateWindow(options_.pod_rate_span);
      window.add({.at = r.at,
                  .value = *r.metrics->samples_appended,
                  .process_start = r.metrics->process_start});
      if (auto rate = window.rate()) {
        sum += *rate;
        ++pods;
      } else {
        awaiting = true;
      }
      windows.emplace(r.pod.uid, std::move(window));
    }
    if (pods > 0) snapshot.per_shard.push_back({shard.index, sum / pods});
  }
  // Pods gone since: their readings go with them.
  entry.pod_windows = std::move(windows);
  if (snapshot.per_shard.empty()) {
    if (awaiting) return std::nullopt;
    snapshot.error_reason = std::string(kReasonShardPodsUnreadable);
    snapshot.error = first_error.empty() ? "no pod of " + std::string(planner::toString(t.kind)) +
                                               " " + t.target_name + " runs with an address to read"
                                         : "no shard pod could be read: " + first_error;
    base::logEvent(base::LogLevel::Warn, "ingestion pod reads failed",
                   {{"key", t.ns + "/" + t.shard_set},
                    {"reason", snapshot.error_reason},
                    {"error", snapshot.error}});
    if (metrics_ != nullptr) metrics_->incDegraded(degradedReason(snapshot.error_reason));
    return snapshot;
  }
  for (const ShardRate& r : snapshot.per_shard) {
    if (!t.active_shards || r.index < *t.active_shards) {
      snapshot.total_samples_per_second += r.samples_per_second;
    }
  }
  snapshot.recommended_shards = recommendedShards(snapshot.total_samples_per_second, t);
  return snapshot;
}

IngestionMonitor::JobResult IngestionMonitor::runJob(const Job& job) {
  if (job.target.prometheus_url.empty()) return readPods(job);
  JobResult result;
  IngestionSnapshot& snapshot = result.snapshot;
  snapshot.last_update = k8s::formatTime(clock_.now());
  const IngestionTarget& t = job.target;
  const std::string query = ingestionQuery(t);

  std::expected<std::vector<ShardRate>, IngestionFailure> rates;
  if (job.refusal) {
    rates = std::unexpected(*job.refusal);
  } else if (!job.client) {
    rates = std::unexpected(failureOfError(*job.client_error));
  } else {
    const auto started = clock_.monotonicNow();
    const auto timeout = queryTimeout(t);
    auto result = job.client->query({.query = query, .timeout = timeout});
    const double seconds = secondsBetween(started, clock_.monotonicNow());
    if (!result) {
      if (metrics_ != nullptr)
        metrics_->observePromQuery(seconds, promql::toString(result.error().kind));
      rates = std::unexpected(failureOfError(result.error()));
    } else {
      if (metrics_ != nullptr) metrics_->observePromQuery(seconds);
      rates = shardRates(*result, t.kind, t.target_name);
    }
  }

  if (!rates) {
    snapshot.error = rates.error().message;
    snapshot.error_reason = rates.error().reason;
    base::logEvent(base::LogLevel::Warn, "ingestion query failed",
                   {{"key", t.ns + "/" + t.shard_set},
                    {"reason", snapshot.error_reason},
                    {"prometheus", t.prometheus_url},
                    {"error", snapshot.error},
                    {"detail", rates.error().detail},
                    {"query", query}});
    if (metrics_ != nullptr) metrics_->incDegraded(degradedReason(snapshot.error_reason));
    return result;
  }
  snapshot.per_shard = std::move(*rates);
  for (const ShardRate& r : snapshot.per_shard) {
    if (!t.active_shards || r.index < *t.active_shards) {
      snapshot.total_samples_per_second += r.samples_per_second;
    }
  }
  snapshot.recommended_shards = recommendedShards(snapshot.total_samples_per_second, t);
  base::logEvent(
      base::LogLevel::Debug, "ingestion rates",
      {{"key", t.ns + "/" + t.shard_set},
       {"shards", snapshot.per_shard.size()},
       {"samples_per_second", snapshot.total_samples_per_second},
       {"recommended_shards",
        snapshot.recommended_shards ? std::to_string(*snapshot.recommended_shards) : "-"}});
  return result;
}

bool IngestionMonitor::finishJobLocked(const Job& job, JobResult result,
                                       k8s::Clock::MonotonicTime started) {
  auto it = entries_.find(job.key);
  if (it == entries_.end()) return false;  // untracked meanwhile
  Entry& entry = it->second;
  if (entry.in_flight_generation == job.generation) entry.in_flight_generation = 0;
  // Retargeted meanwhile: the answer is for the old target; the new one is already due.
  if (entry.generation != job.generation) return false;
  const auto next_due = std::max(started + jitteredIntervalLocked(entry.target.interval),
                                 clock_.monotonicNow() + entry.target.interval / 2);
  std::optional<IngestionSnapshot> computed = std::move(result.snapshot);
  if (result.shards) {
    computed = podSnapshotLocked(entry, std::move(*computed), *result.shards);
    if (!computed) {
      // A first reading of every pod: nothing to publish until the next one.
      entry.due = next_due;
      return false;
    }
  }
  IngestionSnapshot snapshot = std::move(*computed);
  if (snapshot.error.empty() && entry.snapshot && !entry.snapshot->error.empty()) {
    base::logEvent(base::LogLevel::Info, "ingestion rates available again",
                   {{"key", job.key}, {"shards", snapshot.per_shard.size()}});
  }
  entry.snapshot = std::move(snapshot);
  // One interval from start to start; but a query that took about an interval (a hanging
  // Prometheus, cut off by the timeout) is followed by a pause, not by the next one at once.
  entry.due = next_due;
  exportLocked(entry);
  return true;
}

void IngestionMonitor::exportLocked(Entry& entry) {
  if (metrics_ == nullptr || !entry.snapshot) return;
  const IngestionTarget& t = entry.target;
  const IngestionSnapshot& s = *entry.snapshot;
  if (!s.error.empty()) {
    // Stale rates would look current.
    metrics_->clearIngestion(t.ns, t.shard_set);
    entry.exported_shards.clear();
    return;
  }
  std::set<int32_t> now_exported;
  for (const ShardRate& r : s.per_shard) {
    metrics_->setShardSamples(t.ns, t.shard_set, r.index, r.samples_per_second);
    now_exported.insert(r.index);
  }
  for (int32_t gone : entry.exported_shards) {
    if (!now_exported.contains(gone)) metrics_->removeShardSamples(t.ns, t.shard_set, gone);
  }
  entry.exported_shards = std::move(now_exported);
  metrics_->setTotalSamples(t.ns, t.shard_set, s.total_samples_per_second);
  if (s.recommended_shards)
    metrics_->setRecommendedShards(t.ns, t.shard_set, *s.recommended_shards);
}

std::chrono::milliseconds IngestionMonitor::queryTimeout(const IngestionTarget& target) const {
  return std::clamp(target.interval, std::chrono::milliseconds(1), options_.max_query_timeout);
}

std::chrono::nanoseconds IngestionMonitor::jitteredIntervalLocked(
    std::chrono::milliseconds interval) {
  if (options_.jitter <= 0) return interval;
  std::uniform_real_distribution<double> factor(0, options_.jitter);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(interval * (1 + factor(random_)));
}

void IngestionMonitor::dropUnusedClientsLocked() {
  std::set<ClientKey> used;
  for (const auto& [key, entry] : entries_) {
    if (entry.target.prometheus_url.empty()) continue;
    used.emplace(entry.target.prometheus_url, queryTimeout(entry.target));
  }
  std::erase_if(clients_, [&](const auto& c) { return !used.contains(c.first); });
}

}  // namespace shardscaler::ingestion
