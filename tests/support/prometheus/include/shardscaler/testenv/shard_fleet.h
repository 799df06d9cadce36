// Real `prometheus` processes standing in for a target's shard pods: one per StatefulSet index,
// each running the target's generated configuration (its config Secret) with $(SHARD) and
// $(POD_NAME) replaced as the operator's config reloader replaces them, and each read back through
// its own /api/v1/targets. A test fixture only: loopback, free ports, every wait bounded, every
// process stopped with the object.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "shardscaler/testenv/prometheus_process.h"

namespace shardscaler::testenv {

// Which targets one shard scrapes: "<scrape pool>|<discovered __address__>" of each active target.
using ShardTargets = std::set<std::string>;

class ShardFleet {
 public:
  explicit ShardFleet(std::string name);
  ~ShardFleet();
  ShardFleet(const ShardFleet&) = delete;
  ShardFleet& operator=(const ShardFleet&) = delete;

  // Runs one process per entry of `pods` (shard index -> pod name) on `config_yaml`: starts
  // missing ones, reloads those whose substituted configuration changed (all at once), stops
  // those not listed. Throws std::runtime_error when a process does not start or rejects its
  // configuration. Create it, and call this, from a thread that outlives the processes (the test's
  // main thread: PrometheusProcess).
  void apply(const std::string& config_yaml, const std::map<int, std::string>& pods);

  // Every running shard's active targets, once every shard started or reloaded by apply() has
  // synced each scrape pool of its configuration since. Prometheus relabels discovered targets
  // only in such a sync (up to two 5 s ticks after a reload: discovery's, then the scrape
  // manager's); until then /api/v1/targets shows the old configuration's. Throws
  // std::runtime_error after `deadline`, naming the shard and pool that did not sync.
  std::map<int, ShardTargets> settledTargets(
      std::chrono::milliseconds deadline = std::chrono::seconds(60));

  // The configuration shard `index` runs with: $(SHARD) and $(POD_NAME) replaced.
  static std::string substitute(const std::string& config_yaml, int index, const std::string& pod);
  // The job names (scrape pools) of a configuration, in order.
  static std::vector<std::string> jobNames(const std::string& config_yaml);

 private:
  struct Shard;
  ShardTargets targetsOf(const Shard& shard) const;

  std::string name_;
  std::map<int, std::unique_ptr<Shard>> shards_;
};

}  // namespace shardscaler::testenv
