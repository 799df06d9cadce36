// Delete only what is shipped (docs/design/drain.md), end to end: real Prometheus shard processes
// (named like the operator's pods, server or agent mode) remote-write to a real receiver (a
// Prometheus with its remote-write receiver on), and the operator emulator makes their
// StatefulSets. Either a third Prometheus scrapes the shards' own metrics with namespace and pod
// labels and the ShardSet names it, or the ShardSet names no URL and shardscaler reads each
// shard's pod itself: the StatefulSet controller makes the pods, and the test, as their kubelet,
// marks each Running with its process's own loopback address (port 9090, as a pod's web port). A
// shard's process is stopped when its StatefulSet goes, as its pod would be. The receiver's own
// PromQL then says whether every sample a removed shard appended arrived.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "shardscaler/e2e/pod_status_writer.h"
#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/promql_client/prometheus_client.h"
#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/test_kit/metric_samples.h"
#include "shardscaler/test_kit/temp_dir.h"
#include "shardscaler/testenv/prometheus_process.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using SystemClock = std::chrono::system_clock;

constexpr int kShards = 3;
constexpr int kMaxLagSeconds = 5;
// After the receiver is back: its start (~1.2 s), the queues' catch-up (under 3.5 s with the
// queue config ShardedPrometheus sets), the scraper's next scrape (1 s), the next drain check
// (every 5 s) and the deletion. Stated bound: 40 s.
constexpr auto kDeletedWithin = 40s;

// Where the drain reads the shards: a Prometheus that scrapes them, or their own pods.
enum class Source { Scraper, Pods };

class DrainTest : public ShardSetScenario {
 protected:
  // These shards are real processes whose survivors the tests reload by hand, as the operator's
  // config reloader would: the product's floor, so that a deletion here follows that reload.
  std::vector<std::string> shardscalerArgs() const override { return {"--drain-reload-floor=3m"}; }

  void TearDown() override {
    ShardSetScenario::TearDown();
    pods_.reset();
    prom_.reset();
    receiver_.reset();
  }

  // The receiver, kShards shard processes remote-writing to it and the scraper; the target with
  // kShards shards; a ShardSet on it with `policy` (whenScaled, drain) and the scraper's URL. With
  // Source::Pods the shards listen on addresses of their own, their pods are marked Running with
  // them, the ShardSet names no URL and asks for rates every 2 s.
  void start(bool agent, const Json& policy, Source source = Source::Scraper) {
    agent_ = agent;
    target_kind_ = agent ? "PrometheusAgent" : "Prometheus";
    receiver_ = std::make_unique<testenv::PrometheusProcess>(testenv::PrometheusOptions{
        .name = "receiver",
        .config_yaml = "global: {scrape_interval: 15s}\nscrape_configs: []\n",
        .extra_flags = {"--web.enable-remote-write-receiver"},
        .work_dir = testLogDir() / "receiver"});
    prom_ = std::make_unique<testenv::ShardedPrometheus>(
        testenv::ShardedPrometheusOptions{.name = "main",
                                          .ns = ns_,
                                          .shards = kShards,
                                          .agent = agent,
                                          .scrape_interval = 1000ms,
                                          .load_jobs = 1,
                                          .remote_write_url = receiver_->url() + "/api/v1/write",
                                          .work_dir = testLogDir() / "prometheus",
                                          .own_addresses = source == Source::Pods,
                                          .scraper = source == Source::Scraper});
    started_ = SystemClock::now();
    if (source == Source::Scraper) {
      prom_->waitForScrapes(5, 120s);
    } else {
      pods_ = std::make_unique<PodStatusWriter>(
          ns_, [prom = prom_.get()](const std::string& pod) -> std::optional<std::string> {
            if (const auto* process = prom->shardOfPod(pod)) return process->host();
            return std::nullopt;
          });
    }
    // The queue the shard processes run, as the operator would configure it from spec.remoteWrite.
    const std::string spec = "spec: {replicas: 1, shards: " + std::to_string(kShards) +
                             ", remoteWrite: [{url: \"" + receiver_->url() + "/api/v1/write\"}]}\n";
    apply(agent ? "apiVersion: monitoring.coreos.com/v1alpha1\nkind: PrometheusAgent\n"
                  "metadata: {name: main, namespace: " +
                      ns_ + "}\n" + spec
                : "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
                  "namespace: " +
                      ns_ + "}\n" + spec);
    Json shard_set = {
        {"apiVersion", "shardscaler.io/v1alpha1"},
        {"kind", "ShardSet"},
        {"metadata", {{"name", "main"}, {"namespace", ns_}}},
        {"spec",
         {{"targetRef", {{"kind", agent ? "PrometheusAgent" : "Prometheus"}, {"name", "main"}}},
          {"shards", kShards},
          {"shardRetentionPolicy", policy}}}};
    if (source == Source::Scraper) {
      shard_set["spec"]["shardRetentionPolicy"]["drain"]["prometheusURL"] = prom_->scraperUrl();
    } else {
      shard_set["spec"]["ingestion"] = {{"interval", "2s"}};
    }
    apply(shard_set.dump());
    ASSERT_TRUE(waitForSettled(kShards, 0));
    if (source == Source::Pods) {
      ASSERT_TRUE(waitFor("every shard's pod marked Running", [&](std::string* seen) {
        *seen = std::to_string(pods_->marked()) + " marked";
        return pods_->marked() >= kShards;
      }));
    }
    ASSERT_TRUE(waitFor("DrainChecked=True", [&](std::string* seen) {
      auto c = condition("DrainChecked");
      *seen = c ? c->dump() : "no DrainChecked condition";
      return c && c->value("status", "") == "True";
    }));
  }

  static Json drainPolicy(const std::string& when, int timeout_seconds,
                          const std::string& on_timeout = "Keep") {
    return {{"whenScaled", when},
            {"drain",
             {{"maxLagSeconds", kMaxLagSeconds},
              {"timeoutSeconds", timeout_seconds},
              {"onTimeout", on_timeout}}}};
  }

  // The operator's config reloader on the shards that survive a scale-down to `shards`: once the
  // target's spec.shards is that, they reload the configuration the operator wrote for it, and
  // from then on scrape the removed shards' targets. Returns when they have.
  SystemClock::time_point reloadSurvivorsOnceScaledTo(int shards) {
    EXPECT_TRUE(waitFor("spec.shards " + std::to_string(shards), [&](std::string* seen) {
      const Json target = prometheus();
      *seen = target.is_object() ? target["spec"].dump() : "no target";
      return target.is_object() && target["spec"].value("shards", 0) == shards;
    }));
    // Prometheus records a reload's time in whole seconds: the next second is after the lowering.
    std::this_thread::sleep_for(1100ms);
    for (int i = 0; i < shards; ++i) prom_->reloadShard(i);
    return SystemClock::now();
  }

  Json retainedShardStatus(int index) const {
    for (const Json& r : shardSet()["status"].value("retainedShards", Json::array())) {
      if (r.value("index", -1) == index) return r;
    }
    return Json();
  }

  // Waits until each of `shards` is detached and reported Draining with a lag over maxLag.
  ::testing::AssertionResult waitForDraining(std::initializer_list<int> shards,
                                             std::map<int, double>* lags = nullptr) {
    return waitFor("shards draining", [&](std::string* seen) {
      *seen = shardSet()["status"].value("retainedShards", Json::array()).dump();
      for (int i : shards) {
        auto sts = statefulSet(i);
        const Json r = retainedShardStatus(i);
        if (!sts || !sts->retained || sts->being_deleted || !r.is_object() ||
            r.value("phase", "") != "Draining" || r.value("lagSeconds", 0.0) <= kMaxLagSeconds) {
          return false;
        }
        if (lags != nullptr) (*lags)[i] = r["lagSeconds"].get<double>();
      }
      return true;
    });
  }

  // Waits until the StatefulSets of `shards` are gone (or going), stopping each one's process
  // as its pod would stop; returns when each was seen going.
  std::map<int, SystemClock::time_point> waitForDeletedAndStop(std::initializer_list<int> shards,
                                                               std::chrono::seconds timeout) {
    std::map<int, SystemClock::time_point> stopped;
    test_kit::eventually(timeout, 200ms, [&] {
      for (int i : shards) {
        if (stopped.contains(i)) continue;
        auto sts = statefulSet(i);
        if (sts && !sts->being_deleted) continue;
        prom_->shard(i).stop();
        stopped[i] = SystemClock::now();
      }
      return stopped.size() == shards.size();
    });
    return stopped;
  }

  // Every sample shard `index` appended, as its self-scrape `up` series, is in the receiver: no
  // gap longer than two of its scrape intervals from the run's start to its stop.
  void expectNothingLost(int index, SystemClock::time_point stopped) {
    expectNothingLostSince(index, started_, stopped);
  }
  // The same over one life of the process, [started, stopped].
  void expectNothingLostSince(int index, SystemClock::time_point started,
                              SystemClock::time_point stopped) {
    const std::optional<std::string> loss = lossSince(index, started + kStartUp, stopped);
    EXPECT_FALSE(loss) << *loss;
  }
  // What shard `index` lost over [from, stopped] in the receiver, or nullopt: a gap longer than
  // two of its scrape intervals, or samples before `stopped` (its stop, or the moment it stopped
  // scraping) that never arrived.
  std::optional<std::string> lossSince(int index, SystemClock::time_point from,
                                       SystemClock::time_point stopped) {
    const std::string pod = prom_->podName(index);
    auto client = promql::PrometheusClient::create({.base_url = receiver_->url()});
    if (!client) return "no client for the receiver: " + client.error().describe();
    const auto until = stopped + 2s;
    const auto range = std::chrono::duration_cast<std::chrono::seconds>(until - from).count() + 1;
    auto answer = (*client)->query({.query = "up{job=\"load-0\",prometheus_replica=\"" + pod +
                                             "\"}[" + std::to_string(range) + "s]",
                                    .time = until});
    if (!answer) return "the receiver's query failed: " + answer.error().describe();
    if (answer->matrix() == nullptr || answer->matrix()->size() != 1 ||
        answer->matrix()->at(0).points.empty()) {
      return "no series of " + pod + " in the receiver";
    }
    const auto& points = answer->matrix()->at(0).points;
    // Shard i scrapes itself every 1 s / (i + 1).
    const auto interval = std::chrono::milliseconds(1000 / (index + 1));
    std::chrono::milliseconds largest_gap{0};
    for (size_t p = 1; p < points.size(); ++p) {
      largest_gap = std::max(largest_gap, std::chrono::duration_cast<std::chrono::milliseconds>(
                                              points[p].timestamp - points[p - 1].timestamp));
    }
    const auto last = SystemClock::time_point(points.back().timestamp);
    std::cout << pod << ": " << points.size() << " samples in the receiver, largest gap "
              << largest_gap.count() << " ms, last "
              << std::chrono::duration_cast<std::chrono::milliseconds>(stopped - last).count()
              << " ms before the end judged (its stop or detach)\n";
    if (largest_gap > 2 * interval) {
      return pod + ": samples missing in the receiver (a gap of " +
             std::to_string(largest_gap.count()) + " ms)";
    }
    if (last < stopped - 2 * interval - 1s) {
      return pod + ": the samples before the process stopped never arrived";
    }
    return std::nullopt;
  }

  // With the receiver down, a Delete scale-down that removes the last shards, `removed`: they stay
  // Draining through two more checks and the operator deletes none of them; once the receiver is
  // back they are deleted, and nothing they appended is missing in it.
  void expectKeptUntilShipped(std::initializer_list<int> removed) {
    const int to = kShards - static_cast<int>(removed.size());
    receiver_->stop();
    std::this_thread::sleep_for(std::chrono::seconds(kMaxLagSeconds + 3));
    scaleWithKubectl(to);
    reloadSurvivorsOnceScaledTo(to);
    ASSERT_TRUE(waitForDraining(removed)) << shardscaler_->logTail();
    std::this_thread::sleep_for(8s);
    ASSERT_TRUE(waitForDraining(removed));
    EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty()) << "the operator deleted a shard";
    receiver_->restart();
    const auto stopped = waitForDeletedAndStop(removed, kDeletedWithin);
    ASSERT_EQ(stopped.size(), removed.size()) << shardSet()["status"].dump();
    ASSERT_TRUE(waitForSettled(to, 0));
    for (const auto& [i, at] : stopped) expectNothingLost(i, at);
  }

  // What shard `index` appended so far (its own counter), read from its /metrics.
  double appended(int index) {
    const auto r = test_kit::httpGet(prom_->shard(index).url() + "/metrics");
    const auto value =
        test_kit::sumSamples(r.body, agent_ ? "prometheus_remote_storage_samples_in_total"
                                            : "prometheus_tsdb_head_samples_appended_total");
    if (!value) throw std::runtime_error("shard " + std::to_string(index) + " has no counter");
    return *value;
  }

  // The first seconds of a process's life are its start-up, not judged.
  static constexpr std::chrono::seconds kStartUp{10};
  bool agent_ = false;
  SystemClock::time_point started_;
  std::unique_ptr<testenv::PrometheusProcess> receiver_;
  std::unique_ptr<testenv::ShardedPrometheus> prom_;
  std::unique_ptr<PodStatusWriter> pods_;  // Source::Pods: the shards' kubelet
};

// The receiver is down when a Delete scale-down removes shards 1 and 2: they are detached and
// kept, draining with a lag that grows, also across a kill -9 of shardscaler; once the receiver
// is back they are deleted, and nothing they appended is missing in the receiver.
TEST_F(DrainTest, ADeleteScaleDownWaitsForTheReceiverAndLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(start(false, drainPolicy("Delete", 600)));
  receiver_->stop();
  std::this_thread::sleep_for(std::chrono::seconds(kMaxLagSeconds + 3));
  scaleWithKubectl(1);
  reloadSurvivorsOnceScaledTo(1);
  std::map<int, double> first;
  ASSERT_TRUE(waitForDraining({1, 2}, &first)) << shardscaler_->logTail();
  EXPECT_TRUE(waitFor("Progressing=Draining", [&](std::string* seen) {
    auto c = condition("Progressing");
    *seen = c ? c->dump() : "none";
    return c && c->value("reason", "") == "Draining";
  }));

  // kill -9 while they drain: after the restart they are neither deleted nor forgotten.
  shardscaler_->kill9();
  std::this_thread::sleep_for(3s);
  shardscaler_->start();
  std::this_thread::sleep_for(10s);  // past the settle time, and past the (zero) deadline
  std::map<int, double> later;
  ASSERT_TRUE(waitForDraining({1, 2}, &later));
  for (int i : {1, 2}) {
    EXPECT_GT(later[i], first[i]) << "shard " << i
                                  << "'s lag should grow while the receiver is down";
  }
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty()) << "the operator deleted a shard";
  const auto events = shardSetEvents();
  EXPECT_TRUE(std::ranges::any_of(events, [](const std::string& e) {
    return e.starts_with("ShardDraining: ");
  })) << ::testing::PrintToString(events);

  receiver_->restart();
  const auto back = SystemClock::now();
  const auto stopped = waitForDeletedAndStop({1, 2}, kDeletedWithin);
  ASSERT_EQ(stopped.size(), 2u) << "not deleted within " << kDeletedWithin.count()
                                << " s of the receiver coming back; status: "
                                << shardSet()["status"].dump();
  for (const auto& [i, at] : stopped) {
    std::cout << "shard " << i << " deleted "
              << std::chrono::duration_cast<std::chrono::milliseconds>(at - back).count()
              << " ms after the receiver came back\n";
  }
  ASSERT_TRUE(waitForSettled(1, 0));
  for (const auto& [i, at] : stopped) expectNothingLost(i, at);
}

TEST_F(DrainTest, AnAgentsRemovedShardKeepsItsWalUntilItIsShipped) {
  ASSERT_NO_FATAL_FAILURE(start(true, drainPolicy("Delete", 600)));
  expectKeptUntilShipped({2});
}

// A receiver that never comes back: onTimeout Keep keeps the shard and degrades, naming it;
// switched to Delete, the shard goes and a Warning says why.
TEST_F(DrainTest, ATimedOutDrainKeepsOrDeletesAsTheSpecSays) {
  ASSERT_NO_FATAL_FAILURE(start(false, drainPolicy("Delete", 15, "Keep")));
  receiver_->stop();
  std::this_thread::sleep_for(std::chrono::seconds(kMaxLagSeconds + 3));
  scaleWithKubectl(2);
  reloadSurvivorsOnceScaledTo(2);
  ASSERT_TRUE(waitForDraining({2}));
  ASSERT_TRUE(waitFor("Degraded=True/DrainTimedOut", [&](std::string* seen) {
    auto c = condition("Degraded");
    *seen = c ? c->dump() : "none";
    return c && c->value("reason", "") == "DrainTimedOut" &&
           c->value("message", "").find(prom_->statefulSetName(2)) != std::string::npos;
  }));
  std::this_thread::sleep_for(5s);
  auto kept = statefulSet(2);
  ASSERT_TRUE(kept && !kept->being_deleted) << "onTimeout Keep deleted the shard";

  auto patched = adminClient().patch(
      kShardSets, ns_, "main", k8s::PatchType::Merge,
      {{"spec", {{"shardRetentionPolicy", {{"drain", {{"onTimeout", "Delete"}}}}}}}});
  ASSERT_TRUE(patched) << patched.error().describe();
  ASSERT_TRUE(waitFor("shard 2 deleted after the timeout", [&](std::string* seen) {
    auto sts = statefulSet(2);
    *seen = sts ? "still there" : "gone";
    return !sts || sts->being_deleted;
  }));
  EXPECT_TRUE(waitFor("a DrainTimedOut Event", [&](std::string* seen) {
    const auto events = shardSetEvents();
    *seen = ::testing::PrintToString(events);
    return std::ranges::any_of(
        events, [](const std::string& e) { return e.starts_with("DrainTimedOut: Deleted "); });
  }));
}

// The survivors scrape a removed shard's targets only once they reloaded the configuration the
// operator wrote for the lower count (under the operator, a minute or more: the kubelet's
// projection of the changed Secret, then the config reloader). A user condition is read at once
// and holds here at once, yet the shard goes only after that reload; deleted sooner, its targets
// would go unscraped until then.
TEST_F(DrainTest, ARemovedShardGoesOnlyOnceTheSurvivorsReloaded) {
  Json policy = drainPolicy("Delete", 600);
  policy["drain"]["condition"] = "up{namespace=\"$NAMESPACE\",pod=~\"$POD_REGEX\"} == 1";
  ASSERT_NO_FATAL_FAILURE(start(false, policy));
  scaleWithKubectl(2);
  const auto scaled = SystemClock::now();
  std::optional<SystemClock::time_point> gone;
  ASSERT_TRUE(waitFor("shard 2 waiting for the survivors' reload", [&](std::string* seen) {
    auto sts = statefulSet(2);
    if (!gone && (!sts || sts->being_deleted)) gone = SystemClock::now();
    auto c = condition("Progressing");
    *seen = c ? c->dump() : "none";
    return gone || (c && c->value("message", "").find("waiting for the surviving shards") !=
                             std::string::npos);
  }));
  ASSERT_FALSE(gone)
      << "shard 2 deleted "
      << std::chrono::duration_cast<std::chrono::milliseconds>(*gone - scaled).count()
      << " ms after the scale-down, before the survivors reloaded";
  // The drain is checked every 5 s: two more checks, and still kept.
  std::this_thread::sleep_for(11s);
  auto kept = statefulSet(2);
  ASSERT_TRUE(kept && kept->retained && !kept->being_deleted) << shardSet()["status"].dump();

  const auto reloaded = reloadSurvivorsOnceScaledTo(2);
  const auto stopped = waitForDeletedAndStop({2}, kDeletedWithin);
  ASSERT_EQ(stopped.size(), 1u) << "not deleted within " << kDeletedWithin.count()
                                << " s of the survivors' reload; status: "
                                << shardSet()["status"].dump();
  std::cout
      << "shard 2 deleted "
      << std::chrono::duration_cast<std::chrono::milliseconds>(stopped.at(2) - scaled).count()
      << " ms after the scale-down, "
      << std::chrono::duration_cast<std::chrono::milliseconds>(stopped.at(2) - reloaded).count()
      << " ms after the survivors reloaded\n";
  ASSERT_TRUE(waitForSettled(2, 0));
}

// ---- without a URL: the shards' own pods ----

// Each shard's rate comes from two or more readings of its own pod's counter, within 10% of what
// the shard appended over the last 30 s (its load is steady: 1 : 2 : 3 across shards).
TEST_F(DrainTest, WithoutAUrlEachShardsRateComesFromItsOwnPod) {
  ASSERT_NO_FATAL_FAILURE(start(false, drainPolicy("Delete", 600), Source::Pods));
  auto rates = [&] {
    std::map<int, double> out;
    const Json ingestion = shardSet()["status"].value("ingestion", Json::object());
    if (!ingestion.value("error", "x").empty()) return out;
    for (const Json& s : ingestion.value("perShard", Json::array())) {
      out[s.value("index", -1)] = s.value("samplesPerSecond", 0.0);
    }
    return out;
  };
  ASSERT_TRUE(waitFor("a rate for every shard", [&](std::string* seen) {
    *seen = shardSet()["status"].value("ingestion", Json::object()).dump();
    return rates().size() == static_cast<size_t>(kShards);
  }));
  std::map<int, double> before;
  for (int i = 0; i < kShards; ++i) before[i] = appended(i);
  const auto from = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(30s);
  std::map<int, double> expected;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  for (int i = 0; i < kShards; ++i) expected[i] = (appended(i) - before[i]) / seconds;
  // The next snapshot, 2 s on, has readings up to now.
  std::this_thread::sleep_for(3s);
  const auto seen = rates();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kShards)) << shardSet()["status"].dump();
  for (int i = 0; i < kShards; ++i) {
    std::cout << "shard " << i << ": " << seen.at(i) << " samples/s in status, " << expected[i]
              << " appended\n";
    EXPECT_NEAR(seen.at(i), expected[i], expected[i] * 0.1) << "shard " << i;
  }
  EXPECT_TRUE(waitFor("IngestionAvailable=True", [&](std::string* text) {
    auto c = condition("IngestionAvailable");
    *text = c ? c->dump() : "none";
    return c && c->value("status", "") == "True";
  }));
}

// As ADeleteScaleDownWaitsForTheReceiverAndLosesNothing, with the drain read from the removed
// shards' own pods.
TEST_F(DrainTest, WithoutAUrlADeleteScaleDownReadsTheShardsPodsAndLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(start(false, drainPolicy("Delete", 600), Source::Pods));
  expectKeptUntilShipped({1, 2});
}

TEST_F(DrainTest, WithoutAUrlAnAgentsRemovedShardKeepsItsWalUntilItIsShipped) {
  ASSERT_NO_FATAL_FAILURE(start(true, drainPolicy("Delete", 600), Source::Pods));
  expectKeptUntilShipped({2});
}

// A pod that runs (its status says so) but whose Prometheus does not answer (the process hangs:
// SIGSTOP) keeps its shard, with the receiver up and the survivors reloaded; once the same
// process answers again, the shard goes. (A process started anew after the detach would never
// drain: what it held before is not shipped by it.)
TEST_F(DrainTest, WithoutAUrlAShardWhosePodCannotBeReadIsKept) {
  ASSERT_NO_FATAL_FAILURE(start(false, drainPolicy("Delete", 600), Source::Pods));
  const pid_t hung = prom_->shard(2).pid();
  ASSERT_GT(hung, 0);
  ASSERT_EQ(::kill(hung, SIGSTOP), 0);
  // Whatever happens below, the process must be able to take its SIGTERM at the teardown.
  struct Resume {
    pid_t pid;
    ~Resume() { ::kill(pid, SIGCONT); }
  } resume{hung};
  scaleWithKubectl(2);
  reloadSurvivorsOnceScaledTo(2);
  ASSERT_TRUE(waitFor("shard 2 draining: its pod cannot be read", [&](std::string* seen) {
    *seen = shardSet()["status"].dump();
    const auto events = shardSetEvents();
    const Json retained = retainedShardStatus(2);
    return retained.is_object() && retained.value("phase", "") == "Draining" &&
           std::ranges::any_of(events, [](const std::string& e) {
             return e.starts_with("ShardDraining: ") &&
                    e.find("runs but its metrics cannot be read") != std::string::npos;
           });
  })) << ::testing::PrintToString(shardSetEvents());
  std::this_thread::sleep_for(15s);
  auto kept = statefulSet(2);
  ASSERT_TRUE(kept && !kept->being_deleted) << "a shard whose pod cannot be read was deleted";
  ASSERT_EQ(::kill(hung, SIGCONT), 0);
  const auto stopped = waitForDeletedAndStop({2}, kDeletedWithin);
  ASSERT_EQ(stopped.size(), 1u) << shardSet()["status"].dump();
  ASSERT_TRUE(waitForSettled(2, 0));
}

// ---- the drain soak (hack/soak.sh --drain): random scales, receiver outages and kill -9 ----

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::stoi(v) : fallback;
}

// One stretch of a shard process's scraping: from its (re)start or re-attach, to its detach (when
// it stops scraping, as a real detached shard does) or its stop (its StatefulSet went).
struct Lifetime {
  int shard = 0;
  SystemClock::time_point from;  // the first moment judged: after start-up or the re-attach
  std::optional<SystemClock::time_point> detached;
  std::optional<SystemClock::time_point> stopped;
  // Its process was killed and started again while detached: what it held unsent is on its
  // volume only (remote write resumes from the new process's start), so deleting the shard loses
  // it unless that is excused by a timeout.
  bool restarted_detached = false;
  // Not judged, and why: what its process held was lost to the receiver by a kill while it was
  // attached, or before a re-attach, whatever shardscaler does.
  std::string unjudged;
};

class DrainSoak : public DrainTest {
 protected:
  // Skipped before anything starts: a shardscaler stopped in its first moments may not have its
  // signal handlers yet.
  void SetUp() override {
    if (envInt("SHARDSCALER_DRAIN_SEQUENCES", 0) <= 0) {
      GTEST_SKIP() << "set SHARDSCALER_DRAIN_SEQUENCES to run the drain soak";
    }
    DrainTest::SetUp();
  }
  // Each shard's process runs exactly while its StatefulSet exists, as a pod would: stopped when
  // it goes, started again when the operator makes it again; and it scrapes only while attached,
  // as a shard the operator's configuration no longer gives targets. Main thread only (the
  // processes die with the thread that started them).
  void syncProcesses() {
    for (int i = 0; i < kSoakShards; ++i) {
      auto sts = statefulSet(i);
      const bool exists = sts && !sts->being_deleted;
      auto& process = prom_->shard(i);
      const auto now = SystemClock::now();
      if (!exists && process.running()) {
        process.stop();
        for (size_t life : open_[i]) lives_[life].stopped = now;
        open_[i].clear();
      } else if (exists && !process.running()) {
        process.restart();
        if (prom_->scraping(i) != sts->attached) prom_->setScraping(i, sts->attached);
        open_[i] = {lives_.size()};
        lives_.push_back({.shard = i, .from = now + kStartUp});
        if (!sts->attached) lives_.back().detached = now;
      } else if (exists && prom_->scraping(i) != sts->attached) {
        prom_->setScraping(i, sts->attached);
        if (!sts->attached) {
          lives_[open_[i].back()].detached = now;
        } else {
          // A restart while detached lost what the killed process held to the receiver; once
          // the shard is active again that is beyond any drain.
          std::erase_if(open_[i], [&](size_t life) {
            if (!lives_[life].restarted_detached) return false;
            lives_[life].unjudged = "re-attached after a restart while detached";
            return true;
          });
          open_[i].push_back(lives_.size());
          lives_.push_back({.shard = i, .from = now + kReattach});
        }
        ++(sts->attached ? reattaches_ : detaches_);
      }
    }
    reloadSurvivors();
  }
  // The operator's config reloader: when the target's spec.shards changes, the shards below it
  // reload the configuration the operator wrote for it (here unchanged: each scrapes itself).
  void reloadSurvivors() {
    const Json target = prometheus();
    if (!target.is_object()) return;
    const int shards = static_cast<int>(target["spec"].value("shards", 1));
    if (shards == target_shards_) return;
    target_shards_ = shards;
    for (int i = 0; i < std::min(shards, kSoakShards); ++i) {
      if (prom_->shard(i).running()) prom_->reloadShard(i);
    }
  }
  // Shard `index`'s process killed and started again, as an eviction or an OOM kill would.
  void restartShard(int index) {
    auto& process = prom_->shard(index);
    if (!process.running()) return;
    const bool attached = prom_->scraping(index);
    process.stop(0ms);
    process.restart();
    const auto now = SystemClock::now();
    if (attached) {
      // Killed while active: what it held unsent is lost by the kill, drain or not.
      for (size_t life : open_[index]) {
        lives_[life].stopped = now;
        lives_[life].unjudged = "killed while attached";
      }
      open_[index] = {lives_.size()};
      lives_.push_back({.shard = index, .from = now + kStartUp});
    } else {
      for (size_t life : open_[index]) lives_[life].restarted_detached = true;
      ++detached_restarts_;
    }
    ++restarts_;
  }
  void sleepSyncing(std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
      syncProcesses();
      std::this_thread::sleep_for(200ms);
    }
  }

  static constexpr int kSoakShards = kShards;
  // A re-attached shard's first scrapes follow its reload.
  static constexpr std::chrono::seconds kReattach{3};
  std::vector<Lifetime> lives_;
  std::map<int, std::vector<size_t>> open_;  // shard -> its running process's lives in lives_
  int detaches_ = 0, reattaches_ = 0, restarts_ = 0, detached_restarts_ = 0;
  int target_shards_ = kSoakShards;
};

// Random scale sequences with receiver outages, kill -9 of shardscaler and shard processes killed
// and restarted during outages: no shard is deleted while its data is not shipped, unless
// onTimeout: Delete and the timeout passed. Judged from the receiver: every stretch of scraping of
// every shard process that ended in a deletion is there without a gap.
// Runs only with SHARDSCALER_DRAIN_SEQUENCES=N (hack/soak.sh --drain); each sequence takes about
// two minutes.
TEST_F(DrainSoak, RandomOutagesScalesAndKillsLoseNothing) {
  const int sequences = envInt("SHARDSCALER_DRAIN_SEQUENCES", 0);
  const uint64_t seed =
      static_cast<uint64_t>(envInt("SHARDSCALER_DRAIN_SEED", std::random_device{}() % 1000000));
  std::mt19937_64 rng(seed);
  std::cout << "drain soak: seed " << seed << ", " << sequences
            << " sequence(s) in one namespace\n";
  const bool delete_on_timeout = rng() % 3 == 0;
  Json policy =
      drainPolicy(rng() % 2 ? "Delete" : "Retain", 30, delete_on_timeout ? "Delete" : "Keep");
  // Retain with a short period, so that retained shards become due within the run.
  if (policy["whenScaled"] == "Retain") policy["retain"] = {{"retentionPeriod", "5s"}};
  std::cout << "policy " << policy.dump() << "\n";
  ASSERT_NO_FATAL_FAILURE(start(false, policy));
  for (int i = 0; i < kShards; ++i) {
    open_[i] = {lives_.size()};
    lives_.push_back({.shard = i, .from = started_ + kStartUp});
  }
  int outages = 0, kills = 0, scales = 0;
  bool receiver_up = true;
  for (int step = 0; step < sequences * 10; ++step) {
    const int what = static_cast<int>(rng() % 12);
    if (what >= 10) {
      // A shard process killed during an outage (an eviction, an OOM kill), a detached one when
      // there is one: its outage first, and a scale-down that detaches one when none is.
      if (receiver_up) {
        receiver_->stop();
        ++outages;
        receiver_up = false;
      }
      const auto detachedRunning = [&] {
        std::vector<int> detached;
        for (int i = 0; i < kSoakShards; ++i) {
          if (prom_->shard(i).running() && !prom_->scraping(i)) detached.push_back(i);
        }
        return detached;
      };
      const int shards = static_cast<int>(prometheus()["spec"].value("shards", 1));
      if (detachedRunning().empty() && rng() % 3 != 0 && shards > 1) {
        scaleWithKubectl(shards - 1);
        ++scales;
        sleepSyncing(std::chrono::milliseconds(3000 + rng() % 3000));
        // The detach follows the operator's handshake with the survivors: the outage restarts a
        // detached shard once there is one, or any shard after a bounded wait.
        const auto until = std::chrono::steady_clock::now() + 30s;
        while (detachedRunning().empty() && std::chrono::steady_clock::now() < until) {
          sleepSyncing(1000ms);
        }
      }
      std::vector<int> pool = detachedRunning();
      if (pool.empty()) {
        for (int i = 0; i < kSoakShards; ++i) {
          if (prom_->shard(i).running()) pool.push_back(i);
        }
      }
      if (!pool.empty()) restartShard(pool[rng() % pool.size()]);
    } else if (what < 5) {
      const int shards = 1 + static_cast<int>(rng() % kSoakShards);
      scaleWithKubectl(shards);
      ++scales;
    } else if (what < 8) {
      if (receiver_up) {
        receiver_->stop();
        ++outages;
      } else {
        receiver_->restart();
      }
      receiver_up = !receiver_up;
    } else {
      shardscaler_->kill9();
      sleepSyncing(std::chrono::milliseconds(rng() % 3000));
      shardscaler_->start();
      ++kills;
    }
    sleepSyncing(std::chrono::milliseconds(2000 + rng() % 10000));
  }
  if (!receiver_up) receiver_->restart();
  scaleWithKubectl(1);
  const auto settle_until = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < settle_until && statefulSets().size() > 1) {
    sleepSyncing(1s);
  }
  syncProcesses();
  // Each deletion past the timeout under onTimeout: Delete excuses one life of its shard that lost
  // samples; any other loss fails.
  std::map<int, int> excused;
  for (const std::string& e : shardSetEvents()) {
    if (!e.starts_with("DrainTimedOut: Deleted ")) continue;
    for (int i = 0; i < kSoakShards; ++i) {
      if (e.find("(StatefulSet " + prom_->statefulSetName(i) + ")") != std::string::npos) {
        ++excused[i];
      }
    }
  }
  int ended = 0, timed_out = 0, too_short = 0, unjudged = 0, restarted_judged = 0;
  for (const auto& life : lives_) {
    if (!life.stopped) continue;
    if (!life.unjudged.empty()) {
      ++unjudged;
      continue;
    }
    const SystemClock::time_point until = life.detached.value_or(*life.stopped);
    if (until < life.from + 2s) {
      ++too_short;
      continue;
    }
    ++ended;
    restarted_judged += life.restarted_detached;
    const std::optional<std::string> loss = lossSince(life.shard, life.from, until);
    if (!loss) continue;
    if (excused[life.shard] > 0) {
      --excused[life.shard];
      ++timed_out;
      continue;
    }
    ADD_FAILURE() << "shard " << life.shard << " lost data with no timed-out deletion to excuse "
                  << "it: " << *loss;
  }
  std::cout << "drain soak: seed " << seed << ", steps " << sequences * 10 << ", scales " << scales
            << ", receiver outages " << outages << ", kill -9 " << kills << ", detaches "
            << detaches_ << ", re-attaches " << reattaches_ << ", shard restarts in outages "
            << restarts_ << " (" << detached_restarts_
            << " detached), judged lives of deleted shards " << ended << " (" << restarted_judged
            << " restarted while detached; " << timed_out
            << " lost samples after a deletion past their timeout under onTimeout: Delete; "
            << too_short << " too short to judge; " << unjudged
            << " not judged: killed while attached, or re-attached after a restart)\n";
}

}  // namespace
}  // namespace shardscaler::e2e
