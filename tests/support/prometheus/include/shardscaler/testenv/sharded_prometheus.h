// The Prometheus topology of the ingestion tests: N shard processes named like the operator's
// pods, each under real load, and one Prometheus that scrapes them with namespace/pod labels.
// It is a test fixture only: real processes on loopback, never a stand-in for the operator.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "shardscaler/testenv/prometheus_process.h"

namespace shardscaler::testenv {

struct ShardedPrometheusOptions {
  std::string name = "main";      // the Prometheus (or PrometheusAgent) object's name
  std::string ns = "monitoring";  // the `namespace` label the scraper attaches
  int shards = 3;
  int replicas = 1;  // processes per shard (pods <sts>-0, <sts>-1, ...)
  // PrometheusAgent shards: pods prom-agent-<name>-..., agent mode. Debian's 2.42 agent does
  // not export prometheus_agent_samples_appended_total, so their rates cannot be queried.
  bool agent = false;
  // The scraper's interval over the shards' /metrics (and its evaluation interval).
  std::chrono::milliseconds scrape_interval{1000};
  // Load: shard i scrapes its own /metrics `load_jobs` times (distinct job labels, so distinct
  // series) every load_interval / (i + 1); shard rates therefore differ, roughly 1 : 2 : 3.
  int load_jobs = 2;
  std::chrono::milliseconds load_interval{1000};
  // When set, every shard remote-writes everything it appends here (queue "receiver", retrying
  // quickly: min_backoff 100ms, max_backoff 1s, batch_send_deadline 1s), and gives up flushing
  // 3 s after SIGTERM.
  std::string remote_write_url{};
  // Each process gets a sub-dir; a fresh temporary dir when empty.
  std::filesystem::path work_dir{};
  // As pods: every shard process on an address of its own, on Prometheus's own port 9090
  // (127.<b>.<c>.<d>, a random block of 127.0.0.0/8 tried until every address is free).
  bool own_addresses = false;
  // The Prometheus that scrapes the shards (scraperUrl()); off when a test reads pods directly.
  bool scraper = true;
};

class ShardedPrometheus {
 public:
  // Starts the shards, then the scraper. Throws std::runtime_error when a process fails.
  explicit ShardedPrometheus(ShardedPrometheusOptions options = {});
  ~ShardedPrometheus();
  ShardedPrometheus(const ShardedPrometheus&) = delete;
  ShardedPrometheus& operator=(const ShardedPrometheus&) = delete;

  const ShardedPrometheusOptions& options() const;
  int shards() const;
  int replicas() const;

  // The operator's names: StatefulSet "prometheus-main" for shard 0, "prometheus-main-shard-2"
  // for shard 2 (prefix "prom-agent" for agents); pod "<statefulset>-<replica>".
  std::string statefulSetName(int shard) const;
  std::string podName(int shard, int replica = 0) const;
  // "prometheus-main-0|prometheus-main-shard-1-0|..." over every pod, for pod=~ matchers.
  std::string podRegex() const;

  PrometheusProcess& shard(int shard, int replica = 0);
  // The shard process of a pod name (podName), or nullptr.
  PrometheusProcess* shardOfPod(const std::string& pod);
  PrometheusProcess& scraper();
  std::string scraperUrl() const;

  // Changes the load (ShardedPrometheusOptions::load_jobs and load_interval) of every shard
  // process while it runs: rewrites each one's configuration and reloads it. Throws
  // std::invalid_argument for a negative job count or a non-positive interval, and
  // std::runtime_error when a reload fails.
  void setLoad(int load_jobs, std::chrono::milliseconds load_interval);
  // As a detached shard under the real operator, whose hashmod relabeling matches no target once
  // spec.shards is at or below its index: with `scraping` false every replica of `shard` is
  // reloaded with no scrape job and only ships what it holds; true gives it its load again.
  // Every replica must be running; throws std::runtime_error otherwise or when a reload fails.
  void setScraping(int shard, bool scraping);
  bool scraping(int shard) const;
  // As the operator's config reloader after the operator rewrote the configuration (for a new
  // shard count): every replica of `shard` reloads it, here unchanged. Every replica must be
  // running; throws std::runtime_error otherwise or when a reload fails.
  void reloadShard(int shard);

  // Blocks until the scraper holds at least `samples` scraped samples of `up` for every pod
  // (so that rate() over a window of that many intervals has data). Throws after `deadline`.
  void waitForScrapes(int samples, std::chrono::milliseconds deadline) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace shardscaler::testenv
