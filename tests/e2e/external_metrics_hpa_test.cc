// Issue 12, item 5: the real HPA controller of kube-controller-manager 1.20 scales a ShardSet on
// sample ingestion through shardscaler's external metrics API. The API server runs with the
// aggregation layer (testenv's front-proxy CA and client certificate); the aggregator refuses
// loopback endpoints, so the whole test binary lives in a network namespace of its own whose `lo`
// also carries 10.200.0.1, where shardscaler serves. Real Prometheus shards carry the load.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr const char* kAddress = "10.200.0.1";
constexpr const char* kService = "shardscaler-metrics-api";
constexpr const char* kApiService = "v1beta1.external.metrics.k8s.io";
constexpr int kTargetSamplesPerShard = 1000;
constexpr int kMaxShards = 3;
constexpr int kWindowSeconds = 20;
// The HPA's scale-down stabilization window (spec.behavior), and how long a broken Prometheus
// must leave the count alone: longer than the window plus several 2 s HPA syncs.
constexpr int kStabilizationSeconds = 20;
constexpr auto kHoldWindow = 45s;

const k8s::Resource kHpas{"autoscaling", "v2beta2", "horizontalpodautoscalers", true};
const k8s::Resource kApiServices{"apiregistration.k8s.io", "v1", "apiservices", false};

// Before the control plane or any other child exists (a global environment runs before every
// test): every child inherits the namespace, and the namespace dies with the processes.
class NetworkNamespaceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (::unshare(CLONE_NEWNET) != 0) {
      FAIL() << "unshare(CLONE_NEWNET): " << std::strerror(errno);
    }
    for (const std::string& command : std::vector<std::string>{
             "ip link set lo up", std::string("ip addr add ") + kAddress + "/32 dev lo"}) {
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    testenv::setSharedControlPlaneOptions({.aggregation_layer = true});
  }
};
[[maybe_unused]] auto* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new NetworkNamespaceEnvironment);

// A port nothing listens on at kAddress (the namespace is this process's own).
int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, kAddress, &addr.sin_addr);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error(std::string("cannot bind ") + kAddress);
  return ntohs(addr.sin_port);
}

std::string rateQuery() {
  return "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace=\"$NAMESPACE\","
         "pod=~\"$POD_REGEX\"}[" +
         std::to_string(kWindowSeconds) + "s]))";
}

class ExternalMetricsHpaTest : public ShardSetScenario {
 protected:
  std::vector<std::string> shardscalerArgs() const override {
    return {"--webhook-bind-address=" + std::string(kAddress) + ":" + std::to_string(port_),
            "--webhook-cert-secret=" + ns_ + "/shardscaler-webhook-cert",
            "--webhook-hosts=" + std::string(kAddress), "--external-metrics-api=true",
            "--external-metrics-service=" + ns_ + "/" + kService};
  }

  // The Service, its Endpoints at shardscaler's address and the APIService naming it, before
  // shardscaler starts (it injects the APIService's caBundle).
  std::filesystem::path shardscalerKubeconfig() override {
    port_ = freePort();
    const std::string port = std::to_string(port_);
    apply("apiVersion: v1\nkind: Service\nmetadata: {name: " + std::string(kService) +
          ", namespace: " + ns_ + "}\nspec:\n  ports: [{name: https, port: 443, targetPort: " +
          port + "}]\n---\napiVersion: v1\nkind: Endpoints\nmetadata: {name: " + kService +
          ", namespace: " + ns_ + "}\nsubsets:\n- addresses: [{ip: " + kAddress +
          "}]\n  ports: [{name: https, port: " + port +
          "}]\n---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: " +
          kApiService +
          "}\nspec:\n  group: external.metrics.k8s.io\n  version: v1beta1\n"
          "  groupPriorityMinimum: 100\n  versionPriority: 100\n  service: {name: " +
          kService + ", namespace: " + ns_ + ", port: 443}\n");
    return cluster().kubeconfigPath();
  }

  void TearDown() override {
    ShardSetScenario::TearDown();
    (void)adminClient().remove(kApiServices, "", kApiService);
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
            std::to_string(kTargetSamplesPerShard) + "\n    query: '" + rateQuery() + "'\n";
    apply(yaml);
  }

  void applyHpa() {
    apply(
        "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: main, "
        "namespace: " +
        ns_ +
        "}\nspec:\n"
        "  scaleTargetRef: {apiVersion: shardscaler.io/v1alpha1, kind: ShardSet, name: main}\n"
        "  minReplicas: 1\n  maxReplicas: " +
        std::to_string(kMaxShards) +
        "\n  metrics:\n  - type: External\n    external:\n"
        "      metric:\n        name: shardscaler_samples_per_second\n"
        "        selector: {matchLabels: {shardset: main}}\n"
        "      target: {type: AverageValue, averageValue: \"" +
        std::to_string(kTargetSamplesPerShard) +
        "\"}\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: " +
        std::to_string(kStabilizationSeconds) + "}\n");
  }

  Json hpa() const { return getOrNull(kHpas, ns_, "main"); }

  // The HPA's condition of this type, or null.
  Json hpaCondition(const std::string& type) const {
    Json h = hpa();
    if (!h.is_object()) return nullptr;
    for (const Json& c : h["status"].value("conditions", Json::array())) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }

  // What the HPA last read of the metric, in samples/s ("" before it read one).
  std::string hpaCurrentValue() const {
    Json h = hpa();
    if (!h.is_object()) return "";
    for (const Json& m : h["status"].value("currentMetrics", Json::array())) {
      if (m.value("type", "") == "External") {
        return m["external"]["current"].value("averageValue", "");
      }
    }
    return "";
  }

  std::string hpaEvents() const {
    auto r = kubectl("get events -n " + ns_ +
                     " --field-selector involvedObject.kind=HorizontalPodAutoscaler "
                     "-o jsonpath='{range .items[*]}{.reason}: {.message}{\"\\n\"}{end}'");
    return r.out;
  }

  int specShards() const { return shardSet()["spec"].value("shards", -1); }

  int port_ = 0;
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
  ASSERT_TRUE(waitFor(
      "the APIService Available (caBundle injected by shardscaler)",
      [&](std::string* seen) {
        Json s = getOrNull(kApiServices, "", kApiService);
        *seen = s.is_object() ? s["status"].dump() : "no APIService";
        if (!s.is_object()) return false;
        for (const Json& c : s["status"].value("conditions", Json::array())) {
          if (c.value("type", "") == "Available") return c.value("status", "") == "True";
        }
        return false;
      },
      180s));

  applyHpa();
  ASSERT_TRUE(waitFor(
      "the HPA to read shardscaler_samples_per_second",
      [&](std::string* seen) {
        *seen = hpa()["status"].dump();
        return !hpaCurrentValue().empty();
      },
      120s));
  std::cout << "low load: the HPA reads " << hpaCurrentValue() << " samples/s per shard\n";
  EXPECT_EQ(specShards(), 1);

  // Ingestion grows: 6 self-scrapes per 1 s / (index + 1).
  prom.setLoad(6, 1000ms);
  ASSERT_TRUE(waitFor(
      "the HPA to scale the ShardSet up to " + std::to_string(kMaxShards),
      [&](std::string* seen) {
        *seen = "spec.shards=" + std::to_string(specShards()) + " hpa=" + hpa()["status"].dump();
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
          << "the count changed while the metric failed; hpa: " << hpa()["status"].dump();
      Json active = hpaCondition("ScalingActive");
      if (active.is_object() && active.value("status", "") == "False" &&
          active.value("reason", "") == "FailedGetExternalMetric") {
        hpa_saw_error = true;
        last = active.dump();
      }
      std::this_thread::sleep_for(500ms);
    }
    EXPECT_TRUE(hpa_saw_error) << "the HPA never reported the failed metric: "
                               << hpa()["status"].dump();
    std::cout << "broken Prometheus, the HPA says: " << last << "\n";
    EXPECT_EQ(prometheus()["spec"]["shards"], kMaxShards);
  }

  // Prometheus is back with the low rates: the HPA scales down once the window has passed, and
  // Retain keeps the removed shards' StatefulSets.
  prom.scraper().restart();
  ASSERT_TRUE(waitFor(
      "the HPA to scale the ShardSet down to 1",
      [&](std::string* seen) {
        *seen = "spec.shards=" + std::to_string(specShards()) + " hpa=" + hpa()["status"].dump();
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
    Json h = hpa();
    *seen = h["status"].dump();
    Json active = hpaCondition("ScalingActive");
    return h["status"].value("desiredReplicas", -1) == 1 && active.is_object() &&
           active.value("status", "") == "True" && !hpaCurrentValue().empty();
  }));
  std::cout << "after the scale-down the HPA reads " << hpaCurrentValue()
            << " samples/s per shard\n";
}

}  // namespace
}  // namespace shardscaler::e2e
