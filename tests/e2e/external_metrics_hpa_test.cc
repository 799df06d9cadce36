// Issue 12, item 5: the real HPA controller of kube-controller-manager 1.20 scales a ShardSet on
// sample ingestion through shardscaler's external metrics API. The API server runs with the
// aggregation layer (testenv's front-proxy CA and client certificate); the aggregator refuses
// loopback endpoints, so the whole test binary lives in a network namespace of its own whose `lo`
// also carries 10.200.0.1, where shardscaler serves. Real Prometheus shards carry the load.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/e2e/external_metrics_hpa.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kTargetSamplesPerShard = 1000;
constexpr int kMaxShards = 3;
constexpr int kWindowSeconds = 20;
// The HPA's scale-down stabilization window (spec.behavior), and how long a broken Prometheus
// must leave the count alone: longer than the window plus several 2 s HPA syncs.
constexpr int kStabilizationSeconds = 20;
constexpr auto kHoldWindow = 45s;

// Before the control plane or any other child exists (a global environment runs before every
// test): every child inherits the namespace, and the namespace dies with the processes.
class NetworkNamespaceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    try {
      enterMetricsApiNetworkNamespace();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }
};
[[maybe_unused]] auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new NetworkNamespaceEnvironment);

class ExternalMetricsHpaTest : public ShardSetScenario {
 protected:
  std::vector<std::string> shardscalerArgs() const override {
    return registration_->shardscalerArgs();
  }

  // The APIService and its Service before shardscaler starts (it injects the caBundle).
  std::filesystem::path shardscalerKubeconfig() override {
    registration_ = std::make_unique<MetricsApiRegistration>(ns_);
    return cluster().kubeconfigPath();
  }

  void TearDown() override {
    ShardSetScenario::TearDown();
    registration_.reset();
  }

  void applyShardSetWithIngestion(const std::string& url) {
    std::string yaml = shardSetYaml(ns_, "main",
                                    {.shards = 1,
                                     .min_shards = 1,
                                     .max_shards = kMaxShards,
                                     .when_scaled = "Retain",
                                     .retention_period = "1h"});
    yaml += "  ingestion:\n    prometheusURL: \"" + url +
            "\"\n    interval: \"2s\"\n    targetSamplesPerShard: " +
            std::to_string(kTargetSamplesPerShard) + "\n    query: '" +
            samplesRateQuery(kWindowSeconds) + "'\n";
    apply(yaml);
  }

  void applyHpa() {
    apply(samplesHpaYaml({.ns = ns_,
                          .max_replicas = kMaxShards,
                          .target_samples_per_shard = kTargetSamplesPerShard,
                          .scale_down_stabilization_seconds = kStabilizationSeconds}));
  }

  HpaView hpa() const { return readHpa(ns_, "main"); }

  std::string hpaEvents() const {
    auto r = kubectl("get events -n " + ns_ +
                     " --field-selector involvedObject.kind=HorizontalPodAutoscaler "
                     "-o jsonpath='{range .items[*]}{.reason}: {.message}{\"\\n\"}{end}'");
    return r.out;
  }

  int specShards() const { return shardSet()["spec"].value("shards", -1); }

  std::unique_ptr<MetricsApiRegistration> registration_;
};

TEST_F(ExternalMetricsHpaTest, TheHpaScalesShardsOnIngestionAndHoldsWhenPrometheusBreaks) {
  // Low load: every shard scrapes itself once per 15 s / (index + 1).
  createPrometheus(1);
  testenv::ShardedPrometheus prom({.name = "main",
                                   .ns = ns_,
                                   .shards = kMaxShards,
                                   .scrape_interval = 1000ms,
                                   .load_jobs = 1,
                                   .load_interval = 15s,
                                   .work_dir = testLogDir() / "prometheus"});
  prom.waitForScrapes(kWindowSeconds + 5, 180s);
  applyShardSetWithIngestion(prom.scraperUrl());
  ASSERT_TRUE(waitForSettled(1, 0));
  ASSERT_TRUE(waitFor("the APIService Available (caBundle injected by shardscaler)",
                      MetricsApiRegistration::available, 180s));

  applyHpa();
  ASSERT_TRUE(waitFor(
      "the HPA to read shardscaler_samples_per_second",
      [&](std::string* seen) {
        HpaView h = hpa();
        *seen = h.status.dump();
        return !h.metric_value.empty();
      },
      120s));
  std::cout << "low load: the HPA " << hpa().describe() << "\n";
  EXPECT_EQ(specShards(), 1);

  // Ingestion grows: 6 self-scrapes per 1 s / (index + 1).
  prom.setLoad(6, 1000ms);
  ASSERT_TRUE(waitFor(
      "the HPA to scale the ShardSet up to " + std::to_string(kMaxShards),
      [&](std::string* seen) {
        *seen = "spec.shards=" + std::to_string(specShards()) + " hpa=" + hpa().status.dump();
        return specShards() == kMaxShards;
      },
      240s));
  ASSERT_TRUE(waitForSettled(kMaxShards, 0, 120s));
  {
    const std::string events = hpaEvents();
    std::cout << "HPA events:\n" << events;
    EXPECT_NE(events.find("SuccessfulRescale: New size: "), std::string::npos) << events;
    EXPECT_NE(events.find("external metric shardscaler_samples_per_second"), std::string::npos)
        << events;
    EXPECT_NE(events.find("above target"), std::string::npos) << events;
  }

  // Ingestion falls, but Prometheus breaks before its rates show it: the metric is an error and
  // the HPA keeps the count (a zero would scale down after the stabilization window).
  prom.setLoad(1, 15s);
  prom.scraper().stop();
  ASSERT_TRUE(waitFor(
      "the ShardSet's ingestion query to fail",
      [&](std::string* seen) {
        Json ingestion = shardSet()["status"].value("ingestion", Json::object());
        *seen = ingestion.dump();
        return !ingestion.value("error", "").empty();
      },
      60s));
  {
    bool hpa_saw_error = false;
    std::string last;
    const auto until = std::chrono::steady_clock::now() + kHoldWindow;
    while (std::chrono::steady_clock::now() < until) {
      ASSERT_EQ(specShards(), kMaxShards)
          << "the count changed while the metric failed; hpa: " << hpa().status.dump();
      Json active = hpa().condition("ScalingActive");
      if (active.is_object() && active.value("status", "") == "False" &&
          active.value("reason", "") == "FailedGetExternalMetric") {
        hpa_saw_error = true;
        last = active.dump();
      }
      std::this_thread::sleep_for(500ms);
    }
    EXPECT_TRUE(hpa_saw_error) << "the HPA never reported the failed metric: "
                               << hpa().status.dump();
    std::cout << "broken Prometheus, the HPA says: " << last << "\n";
    EXPECT_EQ(prometheus()["spec"]["shards"], kMaxShards);
  }

  // Prometheus is back with the low rates: the HPA scales down once the window has passed, and
  // Retain keeps the removed shards' StatefulSets.
  prom.scraper().restart();
  ASSERT_TRUE(waitFor(
      "the HPA to scale the ShardSet down to 1",
      [&](std::string* seen) {
        *seen = "spec.shards=" + std::to_string(specShards()) + " hpa=" + hpa().status.dump();
        return specShards() == 1;
      },
      240s));
  ASSERT_TRUE(waitForSettled(1, kMaxShards - 1, 120s));
  for (int i = 1; i < kMaxShards; ++i) {
    auto s = statefulSet(i);
    ASSERT_TRUE(s) << "shard " << i << " was deleted";
    EXPECT_TRUE(s->retained && !s->attached) << s->name;
    EXPECT_NE(s->deletion_timestamp, "") << s->name;
  }
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  // The HPA reads the metric again and chose 1 on it. (Its scale-down Event may be dropped: the
  // controller-manager's client-side spam filter allows 25 Events per object, and the failed
  // metric above made one every sync.)
  ASSERT_TRUE(waitFor("the HPA to read the metric again and want 1 shard", [&](std::string* seen) {
    HpaView h = hpa();
    *seen = h.status.dump();
    Json active = h.condition("ScalingActive");
    return h.desired_replicas == 1 && active.is_object() && active.value("status", "") == "True" &&
           !h.metric_value.empty();
  }));
  std::cout << "after the scale-down the HPA " << hpa().describe() << "\n";
}

}  // namespace
}  // namespace shardscaler::e2e
