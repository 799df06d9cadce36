// Planner throughput: 1,000 ShardSets x 50 shards per iteration, in the states a controller
// meets (steady, scaling down with Retain, scaling up over retained shards, expiring), with and
// without reading the objects from JSON first.
#include <chrono>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "shardscaler/retention/planner.h"

namespace shardscaler::retention {
namespace {

using Json = nlohmann::json;
constexpr int kShardSets = 1000;
constexpr int kShards = 50;

const auto kNow = std::chrono::sys_days{std::chrono::year{2026} / 11 / 22} + std::chrono::hours{10};

// Appended, not "lit" + string: g++ 12 -O3 warns falsely on that (-Wrestrict, PR105329).
std::string name(int set) { return std::string("p").append(std::to_string(set)); }
std::string uid(int set) { return std::string("uid-").append(std::to_string(set)); }

std::string stsName(int set, int index) {
  return statefulSetName(TargetKind::Prometheus, name(set), index);
}

Json shardSetJson(int set, int shards) {
  return {{"metadata", {{"name", name(set)}, {"namespace", "ns"}, {"generation", 7}}},
          {"spec",
           {{"targetRef", {{"kind", "Prometheus"}, {"name", name(set)}}},
            {"shards", shards},
            {"maxShards", 100},
            {"shardRetentionPolicy",
             {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "3d"}}}}}}}};
}

Json targetJson(int set, int shards) {
  return {{"kind", "Prometheus"},
          {"metadata",
           {{"name", name(set)}, {"namespace", "ns"}, {"uid", uid(set)}, {"resourceVersion", "9"}}},
          {"spec", {{"shards", shards}, {"replicas", 2}, {"retention", "15d"}}}};
}

Json stsJson(int set, int index, bool retained, const std::string& deadline) {
  Json labels{{"app.kubernetes.io/managed-by", "prometheus-operator"},
              {"operator.prometheus.io/shard", std::to_string(index)},
              {"operator.prometheus.io/mode", "server"}};
  Json annotations = Json::object();
  if (retained) {
    labels["shardscaler.io/retained"] = "true";
    labels["shardscaler.io/shardset"] = name(set);
    annotations["shardscaler.io/detached-labels"] =
        "{\"operator.prometheus.io/name\":\"" + name(set) + "\"}";
    annotations["operator.prometheus.io/deletion-timestamp"] = deadline;
  } else {
    labels["operator.prometheus.io/name"] = name(set);
  }
  return {{"metadata",
           {{"name", stsName(set, index)},
            {"uid", uid(set) + "-" + std::to_string(index)},
            {"resourceVersion", "100"},
            {"labels", labels},
            {"annotations", annotations},
            {"ownerReferences", Json::array({{{"apiVersion", "monitoring.coreos.com/v1"},
                                              {"kind", "Prometheus"},
                                              {"name", name(set)},
                                              {"uid", uid(set)},
                                              {"controller", true}}})}}},
          {"spec", {{"replicas", 2}}}};
}

struct Objects {
  Json shard_set;
  Json target;
  std::vector<Json> stateful_sets;
};

enum class Scenario { Steady, ScaleDownRetain, ScaleUpOverRetained, Expiring };

// Each ShardSet has 50 StatefulSets in the given situation.
std::vector<Objects> makeObjects(Scenario scenario) {
  std::vector<Objects> all;
  for (int set = 0; set < kShardSets; ++set) {
    Objects o;
    int target_shards = kShards, want = kShards, attached = kShards;
    if (scenario == Scenario::ScaleDownRetain) want = kShards / 2;
    if (scenario == Scenario::ScaleUpOverRetained) target_shards = attached = kShards / 2;
    if (scenario == Scenario::Expiring) target_shards = want = attached = kShards / 2;
    o.shard_set = shardSetJson(set, want);
    o.target = targetJson(set, target_shards);
    for (int i = 0; i < kShards; ++i) {
      const bool retained = i >= attached;
      // Expiring: every other retained shard is past its deadline.
      const std::string deadline = i % 2 ? "2026-11-20T00:00:00Z" : "2026-11-25T00:00:00Z";
      o.stateful_sets.push_back(stsJson(set, i, retained, deadline));
    }
    all.push_back(std::move(o));
  }
  return all;
}

PlanInput read(const Objects& o) {
  PlanInput in;
  in.shard_set = *api::decodeShardSet(o.shard_set);
  in.target = *parseTarget(o.target, TargetKind::Prometheus);
  in.stateful_sets.reserve(o.stateful_sets.size());
  for (const auto& s : o.stateful_sets) in.stateful_sets.push_back(*parseStatefulSet(s));
  in.now = kNow;
  return in;
}

void planOnly(benchmark::State& state, Scenario scenario) {
  std::vector<PlanInput> inputs;
  for (const auto& o : makeObjects(scenario)) inputs.push_back(read(o));
  size_t actions = 0;
  for (auto _ : state) {
    for (const auto& in : inputs) {
      Plan plan = planShardSet(in);
      actions += plan.actions.size();
      benchmark::DoNotOptimize(plan);
    }
  }
  state.SetItemsProcessed(state.iterations() * kShardSets);
  state.counters["actions_per_shardset"] = benchmark::Counter(
      static_cast<double>(actions) / static_cast<double>(state.iterations() * kShardSets));
}

void readAndPlan(benchmark::State& state, Scenario scenario) {
  const std::vector<Objects> objects = makeObjects(scenario);
  for (auto _ : state) {
    for (const auto& o : objects) {
      Plan plan = planShardSet(read(o));
      benchmark::DoNotOptimize(plan);
    }
  }
  state.SetItemsProcessed(state.iterations() * kShardSets);
}

BENCHMARK_CAPTURE(planOnly, Steady, Scenario::Steady)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(planOnly, ScaleDownRetain50to25, Scenario::ScaleDownRetain)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(planOnly, ScaleUpOverRetained25to50, Scenario::ScaleUpOverRetained)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(planOnly, Expiring25Retained, Scenario::Expiring)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(readAndPlan, Steady, Scenario::Steady)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(readAndPlan, ScaleDownRetain50to25, Scenario::ScaleDownRetain)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shardscaler::retention

BENCHMARK_MAIN();
