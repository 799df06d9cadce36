// 5e: a real HorizontalPodAutoscaler (autoscaling/v2beta2 on Kubernetes 1.20) whose
// scaleTargetRef is the ShardSet and whose maxReplicas is below the current shard count drives
// a scale-down through the scale subresource, carried out as a Retain scale-down.
#include <chrono>

#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

class HpaTest : public ShardSetScenario {};

TEST_F(HpaTest, MaxReplicasBelowCurrentShardsScalesDownThroughTheScaleSubresource) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  const auto uids = statefulSetUids();

  apply(
      "apiVersion: autoscaling/v2beta2\n"
      "kind: HorizontalPodAutoscaler\n"
      "metadata: {name: main, namespace: " +
      ns_ +
      "}\n"
      "spec:\n"
      "  scaleTargetRef: {apiVersion: shardscaler.io/v1alpha1, kind: ShardSet, name: main}\n"
      "  minReplicas: 1\n"
      "  maxReplicas: 2\n"
      "  metrics:\n"
      "  - type: Resource\n"
      "    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n");

  // The HPA writes spec.shards through /scale ...
  ASSERT_TRUE(waitFor("the HPA to set spec.shards to 2", [&](std::string* seen) {
    Json ss = shardSet();
    *seen = ss["spec"].dump();
    return ss["spec"].value("shards", -1) == 2;
  }));
  // ... and shardscaler carries it out as in 5a.
  ASSERT_TRUE(waitForSettled(2, 2));
  EXPECT_EQ(statefulSetUids(), uids);
  for (int i : {2, 3}) {
    auto s = statefulSet(i);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->retained && !s->attached) << s->name;
    EXPECT_NE(s->deletion_timestamp, "") << s->name;
  }
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());

  // The HPA reads the scale subresource back: status.shards and the one-pod-per-shard selector.
  ASSERT_TRUE(waitFor("the HPA to see 2 current replicas", [&](std::string* seen) {
    auto hpa = kubectl("get horizontalpodautoscalers.v2beta2.autoscaling main -n " + ns_ +
                       " -o jsonpath='{.status.currentReplicas}/{.status.desiredReplicas}'");
    *seen = hpa.out + hpa.err;
    return hpa.out == "2/2";
  }));
  auto scale =
      adminClient().get({"shardscaler.io", "v1alpha1", "shardsets", true}, ns_, "main", "scale");
  ASSERT_TRUE(scale) << scale.error().describe();
  EXPECT_EQ((*scale)["status"]["replicas"], 2);
  EXPECT_EQ((*scale)["status"]["selector"],
            "operator.prometheus.io/name=main,statefulset.kubernetes.io/pod-name in "
            "(prometheus-main-0,prometheus-main-shard-1-0)");
}

}  // namespace
}  // namespace shardscaler::e2e
