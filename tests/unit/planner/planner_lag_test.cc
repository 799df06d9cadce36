// The planner against a simulated operator whose StatefulSet view lags and whose syncs take
// time, as the real one's informer caches and workers do: with the guard enforced, or without it
// within the settle time, no shard is ever lost; with neither, shards are lost (so the
// simulation can tell). Pure: simulated time, no I/O.
#include <deque>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/planner/planner.h"

namespace shardscaler::planner {
namespace {

using namespace testing;  // fixtures
using Rng = std::mt19937_64;
using Clock = std::chrono::system_clock;
using std::chrono::milliseconds;

std::string labelOf(const Json& s, const std::string& key) {
  const Json& labels = s["metadata"].value("labels", Json::object());
  auto it = labels.find(key);
  return it != labels.end() && it->is_string() ? it->get<std::string>() : "";
}

int indexOf(const Json& s) { return std::stoi(labelOf(s, "operator.prometheus.io/shard")); }

struct LagConfig {
  bool planner_guarded = false;  // what shardscaler believes
  bool guard_installed = false;  // what the simulated API server enforces
  milliseconds settle{2000};
  milliseconds max_lag{1800};          // the operator's StatefulSet view trails by up to this
  milliseconds max_sync_latency{150};  // a sync acts on what it read up to this long before
};

class LaggingCluster {
 public:
  LaggingCluster(uint64_t seed, LagConfig config) : rng_(seed), config_(config) {
    w_.shard_set =
        shardSetJson(3, {{"minShards", 1},
                         {"maxShards", 6},
                         {"shardRetentionPolicy",
                          {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "1h"}}}}}});
    w_.target = targetJson(3);
    w_.stateful_sets = attachedShards(0, 3);
    w_.guarded = config.planner_guarded;
    w_.settle = config.settle;
    lag_ = milliseconds(std::uniform_int_distribution<int>(0, config.max_lag.count())(rng_));
    remember();
  }

  // Random ShardSet changes while shardscaler and the operator run; then quiet until both rest.
  void run(int changes) {
    for (int c = 0; c < changes; ++c) {
      w_.shard_set["spec"]["shards"] = std::uniform_int_distribution<int>(1, 6)(rng_);
      w_.shard_set["metadata"]["generation"] =
          w_.shard_set["metadata"]["generation"].get<int>() + 1;
      const int ticks = std::uniform_int_distribution<int>(1, 80)(rng_);
      for (int t = 0; t < ticks; ++t) tick();
    }
    for (int t = 0; t < 600; ++t) tick();  // a minute of quiet
  }

  int losses() const { return losses_; }
  int denials() const { return denials_; }
  milliseconds lag() const { return lag_; }

  void expectConverged() {
    const Plan plan = planShardSet(w_.input());
    const int32_t want = plan.decision.desired->want;
    EXPECT_EQ(effective(), want) << describe(plan);
    EXPECT_FALSE((*w_.target)["spec"].value("paused", false)) << describe(plan);
    std::set<int> attached;
    for (const auto& s : w_.stateful_sets) {
      if (!labelOf(s, "operator.prometheus.io/name").empty()) attached.insert(indexOf(s));
    }
    EXPECT_EQ(attached.size(), static_cast<size_t>(want));
  }

 private:
  int64_t effective() const {
    const Json& s = (*w_.target)["spec"];
    return std::max<int64_t>(1, s.value("shards", 1));
  }

  Json* find(std::vector<Json>& in, const std::string& name) {
    for (auto& s : in) {
      if (s["metadata"]["name"] == name) return &s;
    }
    return nullptr;
  }

  void remember() { history_.emplace_back(w_.now, w_.stateful_sets); }

  // The operator's StatefulSet view: the state `lag_` ago, as its informer has it.
  std::vector<Json> operatorView(Clock::time_point at) const {
    const std::vector<Json>* view = &history_.front().second;
    for (const auto& [when, state] : history_) {
      if (when <= at - lag_) view = &state;
    }
    std::vector<Json> selected;  // its informer selects on the name label
    for (const auto& s : *view) {
      if (!labelOf(s, "operator.prometheus.io/name").empty()) selected.push_back(s);
    }
    return selected;
  }

  // The simulated API server's admission guard (docs/design.md, "The shard guard").
  bool guardDenies(const Json& live, bool reattach) {
    if (!config_.guard_installed || labelOf(live, "shardscaler.io/shardset") != "main") {
      return false;
    }
    const bool retained = labelOf(live, "shardscaler.io/retained") == "true";
    if (reattach) return retained;
    if (retained) return true;  // deadlines are an hour away in this simulation
    const Plan plan = planShardSet(w_.input());
    const int64_t want = plan.decision.desired ? plan.decision.desired->want : 0;
    return indexOf(live) < std::max(effective(), want);
  }

  void operatorWrite() {
    ++rv_;
    remember();
  }

  // One operator sync: the target as of now; creates/labels from its lagging view; then, after
  // its sync latency, deletes what its (then) lagging view shows beyond the target it read.
  void operatorSync() {
    const Json target = *w_.target;  // what this sync holds
    if (target["spec"].value("paused", false)) return;
    const int64_t n = std::max<int64_t>(1, target["spec"].value("shards", 1));
    std::vector<Json> view = operatorView(w_.now);
    for (int i = 0; i < n; ++i) {
      if (find(view, shardName(i)) != nullptr) continue;
      if (Json* live = find(w_.stateful_sets, shardName(i))) {
        // AlreadyExists: its labels put back.
        if (!labelOf(*live, "operator.prometheus.io/name").empty()) continue;
        if (guardDenies(*live, /*reattach=*/true)) {
          ++denials_;
          continue;
        }
        (*live)["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
        operatorWrite();
        continue;
      }
      Json s = attachedShard(i);
      s["metadata"]["uid"] = "sim-uid-" + std::to_string(++uid_);
      s["metadata"]["labels"].erase("shardscaler.io/shardset");
      w_.stateful_sets.push_back(std::move(s));
      operatorWrite();
    }
    const auto sync_latency =
        milliseconds(std::uniform_int_distribution<int>(0, config_.max_sync_latency.count())(rng_));
    pending_cleanup_.emplace_back(w_.now + sync_latency, n);
  }

  // The operator's status worker: its own queue, beside the syncs (a sync still in flight does
  // not hold it back), reporting the target as its cache has it now.
  void operatorStatus() {
    Json& t = *w_.target;
    t["status"]["paused"] = t["spec"].value("paused", false);
    t["status"]["conditions"] = {
        {{"type", "Reconciled"}, {"observedGeneration", t["metadata"]["generation"]}}};
  }

  void operatorCleanup(int64_t n) {
    for (const Json& cached : operatorView(w_.now)) {
      if (indexOf(cached) < n) continue;
      const std::string name = cached["metadata"]["name"];
      Json* live = find(w_.stateful_sets, name);
      if (live == nullptr) continue;
      if (guardDenies(*live, /*reattach=*/false)) {
        ++denials_;
        continue;
      }
      // By name, no preconditions: whatever the object is now.
      if (labelOf(*live, "operator.prometheus.io/name").empty() || indexOf(*live) < effective()) {
        ++losses_;  // a retained (detached) or active shard: its data is gone
      }
      std::erase_if(w_.stateful_sets, [&](const Json& s) { return s["metadata"]["name"] == name; });
      operatorWrite();
    }
  }

  // shardscaler: read everything live, plan, apply (a round can end early: 409 and re-plan).
  void reconcile() {
    for (int round = 0; round < 4; ++round) {
      const Plan plan = planShardSet(w_.input());
      if (plan.actions.empty()) return;
      for (const Action& a : plan.actions) {
        if (!apply(a)) break;
      }
    }
  }

  bool apply(const Action& a) {
    if (a.isTargetAction()) {
      Json& t = *w_.target;
      if (!a.resource_version.empty() && t["metadata"]["resourceVersion"] != a.resource_version) {
        return false;
      }
      const Json spec_before = t["spec"];
      t.merge_patch(a.merge_patch);
      t["metadata"]["resourceVersion"] = std::to_string(++rv_);
      if (t["spec"] != spec_before) {
        t["metadata"]["generation"] = t["metadata"]["generation"].get<int64_t>() + 1;
      }
      return true;
    }
    Json* s = find(w_.stateful_sets, a.object_name);
    if (s == nullptr || (*s)["metadata"]["uid"] != a.uid) return false;
    if (a.type == ActionType::DeleteStatefulSet) {
      std::erase_if(w_.stateful_sets,
                    [&](const Json& x) { return x["metadata"]["name"] == a.object_name; });
    } else {
      s->merge_patch(a.merge_patch);
    }
    ++rv_;
    remember();
    return true;
  }

  void tick() {
    w_.now += milliseconds(std::uniform_int_distribution<int>(20, 200)(rng_));
    for (auto it = pending_cleanup_.begin(); it != pending_cleanup_.end();) {
      if (it->first <= w_.now) {
        operatorCleanup(it->second);
        it = pending_cleanup_.erase(it);
      } else {
        ++it;
      }
    }
    const int roll = std::uniform_int_distribution<int>(0, 9)(rng_);
    if (roll < 4) reconcile();
    // One worker per target, as the operator's work queue: a sync starts after the last ended.
    if (roll >= 3 && pending_cleanup_.empty()) operatorSync();
    if (roll % 2 == 0) operatorStatus();
    // History older than the longest lag is never read again.
    while (history_.size() > 2 &&
           history_[1].first < w_.now - config_.max_lag - milliseconds(500)) {
      history_.pop_front();
    }
  }

  Rng rng_;
  LagConfig config_;
  World w_;
  milliseconds lag_{0};
  std::deque<std::pair<Clock::time_point, std::vector<Json>>> history_;
  std::vector<std::pair<Clock::time_point, int64_t>> pending_cleanup_;
  int rv_ = 5000;
  int uid_ = 0;
  int losses_ = 0;
  int denials_ = 0;
};

struct Totals {
  int losses = 0;
  int denials = 0;
};

Totals runMany(LagConfig config, int sequences) {
  Totals totals;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(sequences); ++seed) {
    LaggingCluster cluster(seed, config);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", lag " + std::to_string(cluster.lag().count()) +
                 " ms");
    cluster.run(12);
    cluster.expectConverged();
    totals.losses += cluster.losses();
    totals.denials += cluster.denials();
    if (::testing::Test::HasFailure()) break;
  }
  return totals;
}

TEST(LaggingOperator, FallbackLosesNothingWhileTheLagStaysWithinTheSettleTime) {
  const Totals t = runMany({.planner_guarded = false,
                            .guard_installed = false,
                            .settle = milliseconds(2000),
                            .max_lag = milliseconds(1800),
                            .max_sync_latency = milliseconds(150)},
                           60);
  EXPECT_EQ(t.losses, 0);
}

TEST(LaggingOperator, FallbackLosesShardsWhenTheLagExceedsTheSettleTime) {
  // The same simulation with the settle time far below the lag: the gates are what protect.
  const Totals t = runMany({.planner_guarded = false,
                            .guard_installed = false,
                            .settle = milliseconds(200),
                            .max_lag = milliseconds(1800),
                            .max_sync_latency = milliseconds(150)},
                           30);
  EXPECT_GT(t.losses, 0);
}

TEST(LaggingOperator, TheGuardLosesNothingWhateverTheLag) {
  const Totals t = runMany({.planner_guarded = true,
                            .guard_installed = true,
                            .max_lag = milliseconds(5000),
                            .max_sync_latency = milliseconds(1000)},
                           60);
  EXPECT_EQ(t.losses, 0);
  EXPECT_GT(t.denials, 0) << "the stale operator never tried: the simulation checks nothing";
}

TEST(LaggingOperator, WithoutGuardOrGatesAStaleOperatorLosesShards) {
  // shardscaler believes a guard is there, but none is: transitions do not wait, and a lagging
  // operator deletes what was just detached. The simulation must see it.
  const Totals t = runMany({.planner_guarded = true,
                            .guard_installed = false,
                            .max_lag = milliseconds(1800),
                            .max_sync_latency = milliseconds(150)},
                           30);
  EXPECT_GT(t.losses, 0);
}

}  // namespace
}  // namespace shardscaler::planner
