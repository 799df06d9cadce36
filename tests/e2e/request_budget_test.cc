// Regression checks by count, not by time: what a first claim of 20 ShardSets over 5 shards each,
// a steady-state round over them (a restart that finds every one at rest) and one guarded
// transition cost in API requests, per verb and resource, against the budgets below. The real
// binary with the shard guard installed, the operator emulator as a plain user, the real control
// plane. Counts come from shardscaler's own request counter (shardscaler_kube_requests_total by
// verb and resource), so nothing else's requests are counted; they hold on a loaded machine where
// times do not.
//
// Every budget line says why the requests are needed. A change that adds requests updates its
// line in the same commit and says why there (CONTRIBUTING.md, "Request budgets"); one request
// more per StatefulSet or per ShardSet fails here. A change that saves requests lowers the line.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/api/well_known.h"
#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/shardscaler_metrics.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kShardSetCount = 20;
constexpr int kShardsEach = 5;
constexpr int kStatefulSetCount = kShardSetCount * kShardsEach;
constexpr int kOperatorUser = 2;

// The resources as shardscaler's request counter names them (k8s::Resource::describe()).
constexpr std::string_view kShardSetsR = "shardsets.shardscaler.io/v1alpha1";
constexpr std::string_view kTargetsR = "prometheuses.monitoring.coreos.com/v1";
constexpr std::string_view kStatefulSetsR = "statefulsets.apps/v1";
constexpr std::string_view kEventsR = "events/v1";
constexpr std::string_view kHpasR = "horizontalpodautoscalers.autoscaling/v1";
constexpr std::string_view kWebhooksR =
    "validatingwebhookconfigurations.admissionregistration.k8s.io/v1";
constexpr std::string_view kNamespacesR = "namespaces/v1";

// Requests by "verb resource", as e2e::metricSumsBy keys them.
using Counts = std::map<std::string, double>;

// At most `most` requests of `verb` on `resource`.
struct BudgetLine {
  std::string_view verb;
  std::string_view resource;
  int most = 0;
};

std::string keyOf(std::string_view verb, std::string_view resource) {
  return std::string(verb) + " " + std::string(resource);
}

Counts requestsOf(const ShardscalerProcess& p) {
  constexpr std::string_view kBy[] = {"verb", "resource"};
  return metricSumsBy(p, "shardscaler_kube_requests_total", kBy);
}

// The admission reviews the guard answered, by "operation result".
Counts reviewsOf(const ShardscalerProcess& p) {
  constexpr std::string_view kBy[] = {"operation", "result"};
  return metricSumsBy(p, "shardscaler_guard_reviews_total", kBy);
}

Counts since(const Counts& after, const Counts& before) {
  Counts out;
  for (const auto& [key, value] : after) {
    auto it = before.find(key);
    const double delta = value - (it == before.end() ? 0 : it->second);
    if (delta != 0) out[key] = delta;
  }
  return out;
}

// Every request spent is on a budget line and within it. The failure shows both tables whole, so
// that whoever changes a budget sees every line it moves.
::testing::AssertionResult withinBudget(const std::string& what, const Counts& spent,
                                        std::span<const BudgetLine> budget) {
  std::map<std::string, int> allowed;
  for (const BudgetLine& line : budget) allowed[keyOf(line.verb, line.resource)] += line.most;
  std::vector<std::string> over;
  for (const auto& [key, count] : spent) {
    auto it = allowed.find(key);
    if (it == allowed.end() || count > it->second) {
      over.push_back(key + ": " + std::to_string(std::lround(count)) + " (budget " +
                     (it == allowed.end() ? std::string("none") : std::to_string(it->second)) +
                     ")");
    }
  }
  std::ostringstream out;
  if (over.empty()) {
    out << what << " spent:";
    for (const auto& [key, count] : spent) out << " " << key << "=" << std::lround(count);
    std::cout << out.str() << "\n";
    return ::testing::AssertionSuccess();
  }
  out << what << " spent more requests than its budget:";
  for (const auto& line : over) out << "\n  " << line;
  out << "\nspent:";
  for (const auto& [key, count] : spent) out << "\n  " << key << " " << std::lround(count);
  out << "\nbudget:";
  for (const auto& [key, most] : allowed) out << "\n  " << key << " " << most;
  return ::testing::AssertionFailure() << out.str();
}

std::string targetName(int i) { return "t-" + std::to_string(i); }

class RequestBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns_ = createNamespace("budget");
    logs_ = testLogDir();
    grantOperatorRole(ns_, "user-" + std::to_string(kOperatorUser));
    webhook_ = GuardWebhook{.configuration = "budget-guard-" + ns_,
                            .port = testenv::pickFreePort(),
                            .label_key = "budget.shardscaler.io/guarded-by",
                            .label_value = ns_};
    guardNamespace(webhook_, ns_);
    installGuardWebhook(webhook_);
    emulator_ = std::make_unique<testenv::OperatorEmulator>(testenv::OperatorEmulatorOptions{
        .kubeconfig =
            cluster().writeKubeconfig("budget-operator", cluster().userToken(kOperatorUser)),
        .namespaces = {ns_},
        .work_dir = logs_ / "emulator"});
    shardscaler_ = std::make_unique<ShardscalerProcess>(
        ShardscalerOptions{.kubeconfig = cluster().kubeconfigPath(),
                           .namespaces = {ns_},
                           .extra_args = guardServingArgs(webhook_, ns_),
                           .log_file = logs_ / "shardscaler.log"});
  }

  void TearDown() override {
    shardscaler_.reset();
    emulator_.reset();
    removeGuardWebhook(webhook_.configuration);
  }

  ::testing::AssertionResult waitGuardEnforced() {
    std::string why;
    if (!test_kit::eventually(
            60s, kPoll,
            [&](std::string* seen) {
              const auto status =
                  guard::readGuardStatus(adminClient(), webhook_.configuration, ns_);
              *seen = status.reason;
              return status.enforced;
            },
            &why)) {
      return ::testing::AssertionFailure() << "the guard was never enforced: " << why;
    }
    return waitUntilGuardCalled(*shardscaler_, ns_);
  }

  // Until the process is ready and its work queue has been empty on two looks a second apart,
  // after at least `reconciles` reconciles: the writes' echoes and the requeues behind them are
  // done, so that the counters hold all a phase cost.
  ::testing::AssertionResult waitQuiet(double reconciles) {
    int empty_looks = 0;
    std::string seen;
    if (test_kit::eventually(
            120s, 1s,
            [&](std::string* state) {
              const auto done = metricSum(*shardscaler_, "shardscaler_reconciles_total");
              const auto depth = metricSum(*shardscaler_, "shardscaler_workqueue_depth");
              *state = "reconciles " + std::to_string(done.value_or(0)) + ", queue depth " +
                       std::to_string(depth.value_or(0));
              // No depth yet: the queue has never held a key.
              empty_looks =
                  depth.value_or(0) == 0 && done.value_or(0) >= reconciles ? empty_looks + 1 : 0;
              return empty_looks >= 2;
            },
            &seen)) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "never quiet: " << seen << "\n"
                                         << shardscaler_->logTail();
  }

  // Every target claimed by its ShardSet at `want(i)` shards, each shard guard-labelled, and the
  // ShardSet's status saying so for its current generation.
  ::testing::AssertionResult waitSettled(const std::function<int(int)>& want) {
    std::string seen;
    if (test_kit::eventually(
            120s, 1s,
            [&](std::string* state) {
              auto shard_sets = k8s::listAll(adminClient(), kShardSets, ns_);
              auto stateful_sets = k8s::listAll(adminClient(), k8s::resources::statefulSets(), ns_);
              if (!shard_sets || !stateful_sets) return false;
              std::map<std::string, int> labelled;
              for (const Json& sts : (*stateful_sets)["items"]) {
                const Json& labels = sts["metadata"].value("labels", Json::object());
                if (labels.contains(std::string(api::kShardSetLabel))) {
                  ++labelled[labels.value(std::string(api::kShardSetLabel), "")];
                }
              }
              int settled = 0;
              for (const Json& s : (*shard_sets)["items"]) {
                const std::string name = s["metadata"].value("name", "");
                const int i = std::stoi(name.substr(2));
                const Json& status = s.value("status", Json::object());
                if (status.value("shards", -1) == want(i) &&
                    status.value("observedGeneration", -1) ==
                        s["metadata"].value("generation", -2) &&
                    labelled[name] == kShardsEach) {
                  ++settled;
                }
              }
              *state =
                  std::to_string(settled) + " of " + std::to_string(kShardSetCount) + " settled";
              return settled == kShardSetCount;
            },
            &seen)) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << seen << "\n" << shardscaler_->logTail();
  }

  std::string ns_;
  std::filesystem::path logs_;
  GuardWebhook webhook_;
  std::unique_ptr<testenv::OperatorEmulator> emulator_;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
};

TEST_F(RequestBudgetTest, FirstClaimSteadyRoundAndTransitionStayWithinTheirBudgets) {
  ASSERT_TRUE(waitGuardEnforced());
  std::string targets;
  for (int i = 0; i < kShardSetCount; ++i) {
    targets += "---\napiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: " +
               targetName(i) + ", namespace: " + ns_ +
               "}\nspec: {shards: " + std::to_string(kShardsEach) + ", replicas: 1}\n";
  }
  apply(targets);
  ASSERT_TRUE(test_kit::eventually(120s, 1s, [&](std::string* seen) {
    auto list = k8s::listAll(adminClient(), k8s::resources::statefulSets(), ns_);
    const size_t n = list ? (*list)["items"].size() : 0;
    *seen = std::to_string(n) + " StatefulSets";
    return n == static_cast<size_t>(kStatefulSetCount);
  }));
  ASSERT_TRUE(waitQuiet(0));

  // ---- The first claim of every ShardSet.
  const Counts before_claim = requestsOf(*shardscaler_);
  const Counts reviews_before_claim = reviewsOf(*shardscaler_);
  const auto claim_started = std::chrono::steady_clock::now();
  std::string shard_sets;
  for (int i = 0; i < kShardSetCount; ++i) {
    shard_sets += "---\n" + shardSetYaml(ns_, targetName(i),
                                         {.target_name = targetName(i),
                                          .shards = kShardsEach,
                                          .when_scaled = "Retain",
                                          .retention_period = "1h"});
  }
  apply(shard_sets);
  ASSERT_TRUE(waitSettled([](int) { return kShardsEach; }));
  ASSERT_TRUE(waitQuiet(kShardSetCount));
  const Counts claim = since(requestsOf(*shardscaler_), before_claim);
  // Not budgeted (the emulator's writes are reviewed too), shown for the record: update.guard
  // reviews each guard label patch.
  for (const auto& [key, count] : since(reviewsOf(*shardscaler_), reviews_before_claim)) {
    std::cout << "the first claim's guard reviews: " << key << " " << std::lround(count) << "\n";
  }
  // Lists that are paced by time, not by ShardSets: at most one a minute per namespace.
  const auto claim_took = std::chrono::steady_clock::now() - claim_started;
  const int minutes =
      1 + static_cast<int>(std::chrono::duration_cast<std::chrono::minutes>(claim_took).count());
  // The serving certificate's Secret and the caBundle of the webhook configuration are checked
  // every 30 s (serving_options.h), whatever the ShardSets do.
  const int half_minutes =
      1 +
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(claim_took).count() / 30);
  const BudgetLine kFirstClaim[] = {
      // Each ShardSet: its finalizer together with the target it binds (one JSON patch, so that a
      // crash between claim and status cannot leave a claim nobody releases), then its status,
      // and that status once more when what it reports moves while the claim settles (the
      // operator's report of the claimed target arriving after it: 40 to 47 measured).
      {"patch", kShardSetsR, 3 * kShardSetCount},
      // Each target: the claim annotation, one merge patch, and again for a claim that met the
      // operator's write of the same target (409: planned again from a new read).
      {"patch", kTargetsR, kShardSetCount + kShardSetCount / 4},
      // Each shard: the guard label shardscaler.io/shardset, without which delete.guard does not
      // see it (docs/design/guard.md). One patch per StatefulSet: the budget's largest line.
      {"patch", kStatefulSetsR, kStatefulSetCount},
      // Each ShardSet's live read of its target before the claim (a cached plan never claims),
      // and at most one more: the reconcile that confirms the claim plans from the caches once
      // they hold its writes, and reads live when they do not yet (20 ShardSets: 27 measured).
      {"get", kTargetsR, 2 * kShardSetCount},
      // With each target read, the list of its shards by the operator's name label (the guard
      // label list is left out of a first claim, docs/design/reads.md: it can add nothing there); a
      // confirming
      // read lists by both labels (20 ShardSets: 34 measured).
      {"list", kStatefulSetsR, 3 * kShardSetCount},
      // OtherWriters: the namespace's HPAs, listed at most once a minute (TargetWriters).
      {"list", kHpasR, minutes},
      // shardscaler_guard_enforced: the guard's configuration and the namespace, read at most
      // once a minute per namespace (GuardStatusCache).
      // The caBundle injector's resync of the same configuration and the certificate store's
      // poll of its Secret, each every 30 s.
      {"get", kWebhooksR, minutes + half_minutes},
      {"get", "secrets/v1", half_minutes},
      {"get", kNamespacesR, minutes},
  };
  EXPECT_TRUE(withinBudget("the first claim of 20 ShardSets", claim, kFirstClaim));

  // ---- A steady-state round: a new process finds every ShardSet at rest.
  shardscaler_->terminate(15s);
  shardscaler_->start();
  ASSERT_TRUE(test_kit::eventually(60s, kPoll, [&](std::string*) {
    return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
  })) << shardscaler_->logTail();
  ASSERT_TRUE(waitQuiet(kShardSetCount));
  const Counts steady = requestsOf(*shardscaler_);
  const BudgetLine kSteadyRound[] = {
      // The informers' first lists and their watches: ShardSets, Prometheuses, PrometheusAgents
      // and the shard StatefulSets of the one namespace (a watch that ends is counted, and may
      // be followed by a relist). Nothing per ShardSet: each one is planned from the caches and
      // its status is what it was, so not even the status is written (docs/design/reads.md).
      {"list", kShardSetsR, 2},
      {"watch", kShardSetsR, 2},
      {"list", kTargetsR, 2},
      {"watch", kTargetsR, 2},
      {"list", "prometheusagents.monitoring.coreos.com/v1alpha1", 2},
      {"watch", "prometheusagents.monitoring.coreos.com/v1alpha1", 2},
      {"list", kStatefulSetsR, 2},
      {"watch", kStatefulSetsR, 2},
      // The serving certificate in its Secret: read, and created or updated when it is not the
      // one the process can serve; the caBundle injected into the webhook configuration.
      {"get", "secrets/v1", 2},
      {"create", "secrets/v1", 1},
      {"update", "secrets/v1", 1},
      {"get", kWebhooksR, 2},
      {"patch", kWebhooksR, 1},
      {"update", kWebhooksR, 1},
      // shardscaler's own user, asked of the API server at start (the guard's own writes).
      {"create", "tokenreviews.authentication.k8s.io/v1", 1},
      // Paced by time as above, one read per namespace shared by the workers that start together.
      {"list", kHpasR, 1},
      {"get", kNamespacesR, 1},
  };
  EXPECT_TRUE(withinBudget("a steady-state round over 20 ShardSets", steady, kSteadyRound));

  // ---- One guarded transition: t-0 from 5 to 4 shards, through the scale subresource.
  const Counts before_transition = requestsOf(*shardscaler_);
  auto scaled = adminClient().patch(kShardSets, ns_, targetName(0), k8s::PatchType::Merge,
                                    Json{{"spec", {{"replicas", kShardsEach - 1}}}}, "scale");
  ASSERT_TRUE(scaled) << scaled.error().describe();
  ASSERT_TRUE(waitSettled([](int i) { return i == 0 ? kShardsEach - 1 : kShardsEach; }));
  ASSERT_TRUE(waitQuiet(0));
  const Counts transition = since(requestsOf(*shardscaler_), before_transition);
  const BudgetLine kTransition[] = {
      // The pause, then spec.shards with the resume (docs/design/guard.md): two target writes.
      {"patch", kTargetsR, 2},
      // The detach of the one shard above the new count.
      {"patch", kStatefulSetsR, 1},
      // The status, and that status once more when what it reports moves after the writes (the
      // operator's report of the paused, then resumed target arriving after the first patch: the
      // same rule as the first claim's; 1 or 2 measured).
      {"patch", kShardSetsR, 2},
      // The plan's live read (the target and its guard-labelled shards), then the read after the
      // writes that finds nothing left to do; a reconcile woken by the operator's pause report
      // or its StatefulSet update before the caches hold our writes reads live once more.
      {"get", kTargetsR, 3},
      {"list", kStatefulSetsR, 3},
      // The guard's status, read beside the target on a spec the status has not seen
      // (docs/design/lagging-operator.md).
      {"get", kWebhooksR, 1},
      {"get", kNamespacesR, 1},
      // The transition's Events: the scale-down and the retained shard.
      {"create", kEventsR, 2},
      {"patch", kEventsR, 2},
      // Paced by time as above.
      {"list", kHpasR, 1},
  };
  EXPECT_TRUE(withinBudget("a guarded transition from 5 to 4 shards", transition, kTransition));
}

}  // namespace
}  // namespace shardscaler::e2e
