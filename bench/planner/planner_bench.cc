// Planner throughput: 1,000 ShardSets x 50 shards per iteration, in the states a controller
// meets (steady, scaling down with Retain, scaling up over retained shards, expiring), with and
// without reading the objects from JSON first.
#include <chrono>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "shardscaler/planner/planner.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

namespace shardscaler::planner {
namespace {

using Json = nlohmann::json;
constexpr int kShardSets = 1000;
constexpr int kShards = 50;

// Appended, not "lit" + string: g++ 12 -O3 warns falsely on that (-Wrestrict, PR105329).
std::string name(int set) { return std::string("p").append(std::to_string(set)); }
std::string uid(int set) { return std::string("uid-").append(std::to_string(set)); }

Json shardSetJson(int set, int shards) {
  return test_objects::shardSetJson(
      shards,
      {{"maxShards", 100},
       {"shardRetentionPolicy",
        {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "3d"}}}}}},
      {.ns = "ns", .name = name(set), .target_name = name(set), .generation = 7});
}

Json targetJson(int set, int shards) {
  return test_objects::targetJson(shards, {{"retention", "15d"}},
                                  {.ns = "ns",
                                   .name = name(set),
                                   .uid = uid(set),
                                   .resource_version = "9",
                                   .generation = std::nullopt,
                                   .claimed_by = name(set)});
}

// The target is claimed and its shards carry the guard label, as after the first round.
Json stsJson(int set, int index, bool retained, const std::string& deadline) {
  const test_objects::ShardShape shape{.ns = "ns",
                                       .target_name = name(set),
                                       .target_uid = uid(set),
                                       .shard_set = name(set),
                                       .guard_label = true,
                                       .uid_prefix = uid(set) + "-",
                                       .resource_version_base = 100};
  return retained ? test_objects::retainedShard(index, deadline, shape)
                  : test_objects::attachedShard(index, shape);
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
  in.now = test_objects::fixedNow();
  in.safety.guard_enforced = true;  // as deploy/ installs it
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
}  // namespace shardscaler::planner

BENCHMARK_MAIN();
