// Reads a target's shards from their own pods (docs/design.md §4): their StatefulSets and pods from
// the API server, then each pod's own /metrics on its web port, a few pods at a time per call.
// It only reads: it never writes to Kubernetes, and never scrapes a pod its StatefulSet does not
// control, nor any port but the pod's declared web port.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/ingestion/pod_metrics.h"
#include "shardscaler/ingestion/shard_pods.h"
#include "shardscaler/ingestion/web_tls.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/promql_client/metrics_scraper.h"

namespace shardscaler::ingestion {

// Which target's shards to read.
struct ShardSource {
  std::string ns;
  planner::TargetKind kind = planner::TargetKind::Prometheus;
  std::string target_name;
  std::string shard_set;  // whose retained shards (shardscaler.io/shardset) count too
  WebTls tls;

  friend bool operator==(const ShardSource&, const ShardSource&) = default;
};

// One pod's scrape.
struct PodReading {
  ShardPod pod;
  std::chrono::system_clock::time_point at;  // when the answer came
  // Its web port answered /metrics (up), whether or not what it holds can be read.
  bool answered = false;
  Expected<PodMetrics> metrics;  // or why it could not be read
};

// A shard StatefulSet, its pods and a reading of each pod that may run (ShardPod::mayRun).
struct ShardReading {
  int32_t index = 0;
  ShardPods pods;
  std::vector<PodReading> readings;
};

struct ShardPodReaderOptions {
  int threads = 8;        // scrapes in flight at once, over every ShardSet
  int per_shard_set = 4;  // scrapes in flight at once for one call
  promql::ScraperOptions scraper;
  // For targets that serve HTTPS: the CA their certificates chain to (the system store when
  // empty), and a client certificate shardscaler presents when one is asked for.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
};

// What a pod source does; a fake stands in for it in unit tests. Thread-safety: any thread.
class ShardMetricsSource {
 public:
  virtual ~ShardMetricsSource() = default;
  // Every shard of the target: the StatefulSets it has attached (operator.prometheus.io/name) and
  // those the ShardSet retains, by index, each with its pods' readings. Fails when the
  // StatefulSets or the pods cannot be listed.
  virtual Expected<std::vector<ShardReading>> readTarget(const ShardSource& source) = 0;
  // The given shard StatefulSets (objects as read), each with its pods' readings.
  virtual Expected<std::vector<ShardReading>> readShards(
      const ShardSource& source, std::span<const nlohmann::json> stateful_sets) = 0;
  // Why no pod of `source` can be read, whatever it answers ("" when they can): a target that
  // asks for a client certificate shardscaler was not given.
  virtual std::string unsupported(const ShardSource& source) const = 0;
};

class ShardPodReader final : public ShardMetricsSource {
 public:
  // Throws std::invalid_argument when the scraper options cannot work.
  ShardPodReader(k8s::KubeClient& client, const k8s::Clock& clock,
                 ShardPodReaderOptions options = {});
  ~ShardPodReader() override;

  Expected<std::vector<ShardReading>> readTarget(const ShardSource& source) override;
  Expected<std::vector<ShardReading>> readShards(
      const ShardSource& source, std::span<const nlohmann::json> stateful_sets) override;

  std::string unsupported(const ShardSource& source) const override;

 private:
  PodReading scrape(const ShardSource& source, const ShardPod& pod,
                    const std::string& service_name);

  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  ShardPodReaderOptions options_;
  std::unique_ptr<promql::MetricsScraper> scraper_;
  k8s::TaskPool pool_;
};

}  // namespace shardscaler::ingestion
