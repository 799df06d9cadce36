// Measures the sample-ingestion rate of every tracked ShardSet's shards at its interval (a PromQL
// query, or a read of each shard pod's own /metrics), keeps the latest snapshot, exports the
// rates as metrics and tells the controller when one is new.
// It never writes to Kubernetes and never changes a shard count: it only reports.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shardscaler/ingestion/ingestion_result.h"
#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler/ingestion/shard_pod_reader.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/promql_client/prom_query.h"
#include "shardscaler/telemetry/metrics.h"

namespace shardscaler::ingestion {

// Makes the query client of one Prometheus URL, whose requests end after `timeout`.
using PromQueryFactory = std::function<promql::Result<std::shared_ptr<promql::PromQuery>>(
    const std::string& base_url, std::chrono::milliseconds timeout)>;

// A promql::PrometheusClient (connections pooled and reused).
PromQueryFactory prometheusClientFactory();

struct IngestionMonitorOptions {
  // Threads sending queries: a slow Prometheus holds up one of them, not every ShardSet.
  int workers = 2;
  // Each next query of a ShardSet starts interval * (1 + U[0, jitter)) after the last one
  // started, so that ShardSets tracked together drift apart, and at least interval / 2 after
  // the last one ended. The first one starts at once.
  double jitter = 0.1;
  // A query gets min(interval, max_query_timeout), client side and as the API's `timeout`.
  std::chrono::milliseconds max_query_timeout{std::chrono::seconds(10)};
  PromQueryFactory client_factory;  // prometheusClientFactory() when empty
  // The URLs it may query; a ShardSet naming another gets the policy's refusal as its snapshot's
  // error, and no request is sent, no client made.
  PrometheusUrlPolicy url_policy = PrometheusUrlPolicy::defaults();
  // Reads the shards' own pods for a ShardSet that names no URL (such a ShardSet's snapshot is an
  // error while it is null). A pod's rate is its counter's increase over the readings of the
  // last `pod_rate_span`; the first snapshot comes with a pod's second reading.
  std::shared_ptr<ShardMetricsSource> pod_source;
  std::chrono::seconds pod_rate_span{std::chrono::minutes(5)};
};

// Thread-safety: every method may be called from any thread. The callback runs on a worker
// thread with no lock held, after each query of a tracked ShardSet (success or failure).
class IngestionMonitor final : public IngestionSource {
 public:
  using Notify = std::function<void(const std::string& key)>;

  // metrics may be null. clock and metrics must outlive the monitor.
  IngestionMonitor(const k8s::Clock& clock, telemetry::Metrics* metrics, Notify on_result,
                   IngestionMonitorOptions options = {});
  ~IngestionMonitor() override;  // stop()
  IngestionMonitor(const IngestionMonitor&) = delete;
  IngestionMonitor& operator=(const IngestionMonitor&) = delete;

  void start();
  // No new query starts after this; returns at once.
  void requestStop();
  // requestStop(), then waits for the queries in flight (each bounded by its timeout).
  void stop();

  // A changed target (URL, query, interval, clamps, ...) is queried again at once; its old
  // snapshot stays until the new answer.
  void track(const std::string& key, const IngestionTarget& target) override;
  // Forgets the ShardSet and drops its rate series; an answer still in flight is discarded.
  void untrack(const std::string& key) override;
  std::optional<IngestionSnapshot> snapshot(const std::string& key) const override;

  // Keys tracked now, for tests and logs.
  std::vector<std::string> trackedKeys() const;
  // When the next query is due (of the ShardSets not being queried now); nullopt when none is.
  std::optional<k8s::Clock::MonotonicTime> nextQueryAt() const;

 private:
  using ClientKey = std::pair<std::string, std::chrono::milliseconds>;
  struct Entry {
    IngestionTarget target;
    uint64_t generation = 0;  // changes with the target; an older answer is discarded
    k8s::Clock::MonotonicTime due{};
    uint64_t in_flight_generation = 0;  // of the query running now; 0 = none
    std::optional<IngestionSnapshot> snapshot;
    std::set<int32_t> exported_shards;              // shards with a samples series in metrics
    std::map<std::string, RateWindow> pod_windows;  // by pod uid, for a ShardSet without a URL
  };
  struct Job {
    std::string key;
    uint64_t generation = 0;
    IngestionTarget target;
    std::shared_ptr<promql::PromQuery> client;  // null when it could not be made or was refused
    std::optional<promql::Error> client_error;
    std::optional<IngestionFailure> refusal;  // the URL policy's
  };

  void worker();
  // The earliest entry due and not in flight, or end().
  std::map<std::string, Entry>::iterator nextDueLocked();
  Job startJobLocked(const std::string& key, Entry& entry);
  // What one query or one round of pod reads found.
  struct JobResult {
    IngestionSnapshot snapshot;                       // of a query, or of a failed pod round
    std::optional<std::vector<ShardReading>> shards;  // a pod round's readings
  };
  // Runs the query of `job` without the lock.
  JobResult runJob(const Job& job);
  // The readings of the shards' own pods.
  JobResult readPods(const Job& job);
  // The rates of a pod round from the entry's windows; nullopt while no pod has two readings.
  std::optional<IngestionSnapshot> podSnapshotLocked(Entry& entry, IngestionSnapshot snapshot,
                                                     const std::vector<ShardReading>& shards);
  // Stores the answer; false when it was discarded (untracked or retargeted meanwhile).
  bool finishJobLocked(const Job& job, JobResult result, k8s::Clock::MonotonicTime started);
  void exportLocked(Entry& entry);
  std::chrono::milliseconds queryTimeout(const IngestionTarget& target) const;
  std::chrono::nanoseconds jitteredIntervalLocked(std::chrono::milliseconds interval);
  void dropUnusedClientsLocked();

  const k8s::Clock& clock_;
  telemetry::Metrics* metrics_;
  Notify on_result_;
  IngestionMonitorOptions options_;

  mutable std::mutex mutex_;  // guards everything below; the wait mutex of changed_
  std::condition_variable changed_;
  uint64_t version_ = 0;  // bumped whenever the schedule changes
  uint64_t next_generation_ = 1;
  bool stopping_ = false;
  std::map<std::string, Entry> entries_;
  std::map<ClientKey, std::shared_ptr<promql::PromQuery>> clients_;
  std::mt19937_64 random_{std::random_device{}()};
  std::vector<std::thread> workers_;
};

}  // namespace shardscaler::ingestion
