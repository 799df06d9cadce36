// deploy/examples refer to what the other kustomizations render: the HPA scales the example
// ShardSet, and each PodMonitor selects a shardscaler pod and names a port it has.
#include <gtest/gtest.h>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

const std::vector<Json>& examples() { return render("examples").objects; }

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
  const Json& metric = (*hpa)["spec"]["metrics"][0];
  EXPECT_EQ(metric.value("type", ""), "Resource");
  EXPECT_EQ(metric["resource"].value("name", ""), "cpu");
}

bool selects(const Json& selector, const Json& labels) {
  for (const auto& [key, value] : selector.items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
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
