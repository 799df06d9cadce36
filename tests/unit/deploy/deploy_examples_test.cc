// deploy/examples refer to what the other kustomizations render: the HPA scales the example
// ShardSet, and each PodMonitor selects a shardscaler pod and names a port it has.
#include <gtest/gtest.h>

#include <algorithm>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

const std::vector<Json>& examples() { return render("examples").objects; }

bool selects(const Json& selector, const Json& labels) {
  for (const auto& [key, value] : selector.items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
}

TEST(ExamplesTest, HpaScalesTheExampleShardSetWithinItsClamps) {
  auto hpa = find(examples(), "HorizontalPodAutoscaler", "prometheus-main-shards");
  auto shard_set = find(examples(), "ShardSet", "main");
  ASSERT_TRUE(hpa);
  ASSERT_TRUE(shard_set);
  const Json& ref = (*hpa)["spec"]["scaleTargetRef"];
  EXPECT_EQ(ref.value("apiVersion", ""), "shardscaler.io/v1alpha1");
  EXPECT_EQ(ref.value("kind", ""), "ShardSet");
  EXPECT_EQ(ref.value("name", ""), "main");
  EXPECT_EQ((*hpa)["metadata"]["namespace"], (*shard_set)["metadata"]["namespace"]);
  // Outside the ShardSet's clamps the HPA would ask for counts shardscaler never sets.
  EXPECT_GE((*hpa)["spec"].value("minReplicas", 1), (*shard_set)["spec"].value("minShards", 1));
  EXPECT_LE((*hpa)["spec"].value("maxReplicas", 0), (*shard_set)["spec"].value("maxShards", 50));
  // The external metric of this ShardSet, with the target that makes the HPA's count
  // status.recommendedShards
  // (scaler/metrics-api/include/shardscaler/metrics_api/external_metrics.h).
  const Json& metric = (*hpa)["spec"]["metrics"][0];
  EXPECT_EQ(metric.value("type", ""), "External");
  EXPECT_EQ(metric["external"]["metric"].value("name", ""), "shardscaler_samples_per_second");
  EXPECT_EQ(metric["external"]["metric"]["selector"]["matchLabels"], Json({{"shardset", "main"}}));
  EXPECT_EQ(metric["external"]["target"].value("type", ""), "AverageValue");
  EXPECT_EQ(
      metric["external"]["target"].value("averageValue", ""),
      std::to_string((*shard_set)["spec"]["ingestion"]["targetSamplesPerShard"].get<int64_t>()));
  EXPECT_GT((*hpa)["spec"]["behavior"]["scaleDown"].value("stabilizationWindowSeconds", 0), 0);
}

TEST(ExamplesTest, TheAlternativesScaleTheSameShardSet) {
  auto shard_set = find(examples(), "ShardSet", "main");
  ASSERT_TRUE(shard_set);
  // Same name as the default HPA: applying the CPU one replaces it.
  auto cpu =
      find(render("examples/cpu").objects, "HorizontalPodAutoscaler", "prometheus-main-shards");
  ASSERT_TRUE(cpu);
  EXPECT_EQ((*cpu)["spec"]["scaleTargetRef"].value("name", ""), "main");
  EXPECT_EQ((*cpu)["spec"]["metrics"][0]["resource"].value("name", ""), "cpu");
  auto keda = find(render("examples/keda").objects, "ScaledObject", "prometheus-main-shards");
  ASSERT_TRUE(keda);
  const Json& ref = (*keda)["spec"]["scaleTargetRef"];
  EXPECT_EQ(ref.value("apiVersion", ""), "shardscaler.io/v1alpha1");
  EXPECT_EQ(ref.value("kind", ""), "ShardSet");
  EXPECT_EQ(ref.value("name", ""), "main");
  EXPECT_EQ((*keda)["metadata"]["namespace"], (*shard_set)["metadata"]["namespace"]);
  const Json& trigger = (*keda)["spec"]["triggers"][0];
  EXPECT_EQ(trigger.value("type", ""), "prometheus");
  EXPECT_EQ(trigger.value("metricType", ""), "AverageValue");
  EXPECT_EQ(
      trigger["metadata"].value("threshold", ""),
      std::to_string((*shard_set)["spec"]["ingestion"]["targetSamplesPerShard"].get<int64_t>()));
  // The ShardSet reads its shards' own pods; KEDA needs a Prometheus that scrapes them all, which
  // the operator's Service over the shards themselves is not.
  EXPECT_FALSE((*shard_set)["spec"]["ingestion"].contains("prometheusURL"));
  EXPECT_EQ(trigger["metadata"].value("serverAddress", "").find("prometheus-operated"),
            std::string::npos);
}

// No install renders the APIService: shardscaler creates it where none exists, so that applying
// an install never takes external.metrics.k8s.io from another server. Each install that serves
// the API registers it for a Service of that install that reaches the port the API is served on.
TEST(MetricsApiTest, ShardscalerRegistersTheApiServiceForAServiceThatReachesIt) {
  int serving = 0;
  for (const auto& install : shardscalerInstalls()) {
    SCOPED_TRACE("deploy/" + install.dir);
    const ShardscalerPod pod = shardscalerPod(install);
    const auto& objects = render(install.dir).objects;
    EXPECT_TRUE(ofKind(objects, "APIService").empty()) << "an install applies an APIService";
    if (!pod.options.external_metrics_api) {
      EXPECT_FALSE(pod.options.register_api_service);
      EXPECT_FALSE(find(objects, "Service", pod.options.external_metrics_service));
      continue;
    }
    ++serving;
    EXPECT_TRUE(pod.options.register_api_service) << "serves the API but never registers it";
    EXPECT_EQ(pod.options.external_metrics_service_namespace, pod.ns);
    auto service = find(objects, "Service", pod.options.external_metrics_service);
    ASSERT_TRUE(service);
    EXPECT_EQ((*service)["metadata"].value("namespace", ""), pod.ns);
    EXPECT_TRUE(selects((*service)["spec"]["selector"],
                        pod.deployment["spec"]["template"]["metadata"]["labels"]));
    const Json& port = (*service)["spec"]["ports"][0];
    EXPECT_EQ(port.value("port", 0), 443) << "the port shardscaler's APIService names";
    int64_t target = -1;
    for (const Json& declared : pod.container["ports"]) {
      if (declared.value("name", "") == port.value("targetPort", "")) {
        target = declared.value("containerPort", -1);
      }
    }
    EXPECT_EQ(target, pod.options.webhook_bind_address->port);
    EXPECT_TRUE(pod.options.webhook_cert_dir.empty());
    EXPECT_NE(std::ranges::find(pod.options.webhook_hosts,
                                pod.options.external_metrics_service + "." + pod.ns + ".svc"),
              pod.options.webhook_hosts.end());
    // The front proxy's ConfigMap can only be read from kube-system.
    auto reader =
        find(objects, "RoleBinding", "shardscaler-extension-apiserver-authentication-reader");
    ASSERT_TRUE(reader);
    EXPECT_EQ((*reader)["metadata"].value("namespace", ""), "kube-system");
  }
  EXPECT_EQ(serving, 1) << "overlays/external-metrics, and only it, serves the API";
}

// The HPA controller may read every metric shardscaler serves, as its ServiceAccount and as
// kube-controller-manager's own user.
TEST(MetricsApiTest, TheHpaControllerMayReadTheMetrics) {
  const auto& objects = render("overlays/external-metrics").objects;
  auto role = find(objects, "ClusterRole", "shardscaler-external-metrics-reader");
  auto binding = find(objects, "ClusterRoleBinding", "shardscaler-external-metrics-reader");
  ASSERT_TRUE(role);
  ASSERT_TRUE(binding);
  std::vector<std::string> resources = (*role)["rules"][0]["resources"];
  std::ranges::sort(resources);
  EXPECT_EQ(resources, (std::vector<std::string>{"shardscaler_max_shard_samples_per_second",
                                                 "shardscaler_recommended_shards",
                                                 "shardscaler_samples_per_second"}));
  EXPECT_EQ((*role)["rules"][0]["verbs"], Json({"get", "list"}));
  EXPECT_EQ((*binding)["subjects"],
            Json::parse(R"([{"kind":"ServiceAccount","name":"horizontal-pod-autoscaler",
                             "namespace":"kube-system"},
                            {"apiGroup":"rbac.authorization.k8s.io","kind":"User",
                             "name":"system:kube-controller-manager"}])"));
}

// The same HPA for the API servers before autoscaling/v2 (1.23): only the apiVersion differs.
TEST(ExamplesTest, TheAutoscalingV2beta2HpaIsTheV2OneForOlderClusters) {
  auto v2 = find(examples(), "HorizontalPodAutoscaler", "prometheus-main-shards");
  auto v2beta2 = find(render("examples/autoscaling-v2beta2").objects, "HorizontalPodAutoscaler",
                      "prometheus-main-shards");
  ASSERT_TRUE(v2);
  ASSERT_TRUE(v2beta2);
  EXPECT_EQ((*v2).value("apiVersion", ""), "autoscaling/v2");
  EXPECT_EQ((*v2beta2).value("apiVersion", ""), "autoscaling/v2beta2");
  EXPECT_EQ((*v2beta2)["spec"], (*v2)["spec"]);
  EXPECT_EQ((*v2beta2)["metadata"], (*v2)["metadata"]);
}

TEST(ExamplesTest, EachPodMonitorSelectsAShardscalerPodAndItsMetricsPort) {
  const auto monitors = ofKind(examples(), "PodMonitor");
  ASSERT_EQ(monitors.size(), 2u);
  for (const Json& monitor : monitors) {
    SCOPED_TRACE("PodMonitor " + monitor["metadata"].value("name", ""));
    const Json& match = monitor["spec"]["selector"]["matchLabels"];
    const std::string port = monitor["spec"]["podMetricsEndpoints"][0].value("port", "");
    bool found = false;
    for (const auto& install : shardscalerInstalls()) {
      const ShardscalerPod p = shardscalerPod(install);
      if (p.ns != monitor["metadata"].value("namespace", "") ||
          !selects(match, p.deployment["spec"]["template"]["metadata"]["labels"])) {
        continue;
      }
      found = true;
      int64_t number = -1;
      for (const Json& declared : p.container["ports"]) {
        if (declared.value("name", "") == port) number = declared.value("containerPort", -1);
      }
      EXPECT_EQ(number, p.options.metrics_bind_address->port)
          << "port " << port << " is not shardscaler's metrics port in deploy/" << install.dir;
    }
    EXPECT_TRUE(found) << "selects no shardscaler pod of deploy/";
  }
}

}  // namespace
}  // namespace shardscaler::deploy_test
