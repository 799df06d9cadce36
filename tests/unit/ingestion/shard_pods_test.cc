#include "shardscaler/ingestion/shard_pods.h"

#include <gtest/gtest.h>

namespace shardscaler::ingestion {
namespace {

using Json = nlohmann::json;

Json statefulSet(const std::string& name = "prometheus-main-shard-1") {
  return {{"metadata", {{"name", name}, {"uid", "sts-uid"}}},
          {"spec",
           {{"replicas", 2},
            {"selector", {{"matchLabels", {{"operator.prometheus.io/shard", "1"}}}}}}}};
}

// A pod of the StatefulSet as its controller makes it, running with an IP.
Json pod(const std::string& name = "prometheus-main-shard-1-0") {
  return {
      {"metadata",
       {{"name", name},
        {"uid", "uid-" + name},
        {"labels", {{"operator.prometheus.io/shard", "1"}}},
        {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"},
                                          {"kind", "StatefulSet"},
                                          {"name", "prometheus-main-shard-1"},
                                          {"uid", "sts-uid"},
                                          {"controller", true}}})}}},
      {"spec",
       {{"containers",
         Json::array(
             {{{"name", "prometheus"},
               {"ports",
                Json::array({{{"name", "web"}, {"containerPort", 9090}, {"protocol", "TCP"}}})}},
              {{"name", "config-reloader"},
               {"ports", Json::array({{{"name", "reloader-web"}, {"containerPort", 8080}}})}}})}}},
      {"status", {{"phase", "Running"}, {"podIP", "10.0.0.7"}}}};
}

TEST(ShardPods, ReadsThePodsItControlsOnTheirWebPort) {
  std::vector<Json> pods{pod("prometheus-main-shard-1-1"), pod()};
  pods[0]["status"]["podIP"] = "10.0.0.8";
  const ShardPods read = shardPods(statefulSet(), pods);
  EXPECT_EQ(read.problem, "");
  EXPECT_EQ(read.replicas, 2);
  EXPECT_FALSE(read.keeps_volumes);
  ASSERT_EQ(read.pods.size(), 2u);
  EXPECT_EQ(read.pods[0].name, "prometheus-main-shard-1-0");
  EXPECT_EQ(read.pods[0].ordinal, 0);
  EXPECT_EQ(read.pods[0].ip, "10.0.0.7");
  EXPECT_EQ(read.pods[0].web_port, 9090);
  EXPECT_EQ(read.pods[0].run, PodRun::Running);
  EXPECT_TRUE(read.pods[0].mayRun());
  EXPECT_EQ(read.pods[1].ordinal, 1);
  EXPECT_TRUE(read.foreign.empty());
}

TEST(ShardPods, APodItDoesNotControlIsNeverRead) {
  Json other_owner = pod();
  other_owner["metadata"]["ownerReferences"][0]["uid"] = "another-uid";
  Json not_controller = pod();
  not_controller["metadata"]["ownerReferences"][0]["controller"] = false;
  Json other_kind = pod();
  other_kind["metadata"]["ownerReferences"][0]["kind"] = "ReplicaSet";
  Json no_owner = pod();
  no_owner["metadata"].erase("ownerReferences");
  Json other_labels = pod();
  other_labels["metadata"]["labels"]["operator.prometheus.io/shard"] = "2";
  Json leading_zero = pod("prometheus-main-shard-1-01");
  Json other_name = pod("prometheus-main-shard-10-0");
  const std::vector<Json> pods{other_owner,  not_controller, other_kind, no_owner,
                               other_labels, leading_zero,   other_name};
  const ShardPods read = shardPods(statefulSet(), pods);
  EXPECT_TRUE(read.pods.empty());
  // Those named like its pods are reported; another StatefulSet's pod is simply not its.
  EXPECT_EQ(read.foreign.size(), 5u) << ::testing::PrintToString(read.foreign);
}

TEST(ShardPods, OnlyAPortNamedWebOverTcpIsTheWebPort) {
  Json renamed = pod();
  renamed["spec"]["containers"][0]["ports"][0]["name"] = "http";
  Json udp = pod();
  udp["spec"]["containers"][0]["ports"][0]["protocol"] = "UDP";
  Json out_of_range = pod();
  out_of_range["spec"]["containers"][0]["ports"][0]["containerPort"] = 70000;
  for (const Json& p : {renamed, udp, out_of_range}) {
    const std::vector<Json> pods{p};
    const ShardPods read = shardPods(statefulSet(), pods);
    ASSERT_EQ(read.pods.size(), 1u);
    EXPECT_FALSE(read.pods[0].web_port) << p.dump();
  }
}

TEST(ShardPods, WhetherAPodMayRunComesFromItsPhaseAndContainers) {
  auto runOf = [](Json status, bool terminating = false) {
    Json p = pod();
    p["status"] = std::move(status);
    if (terminating) p["metadata"]["deletionTimestamp"] = "2026-11-28T00:00:00Z";
    const std::vector<Json> pods{p};
    return shardPods(statefulSet(), pods).pods.at(0);
  };
  EXPECT_EQ(runOf({{"phase", "Pending"}}).run, PodRun::NotStarted);
  EXPECT_FALSE(runOf({{"phase", "Pending"}}).mayRun());
  EXPECT_EQ(
      runOf({{"phase", "Pending"},
             {"containerStatuses",
              Json::array({{{"restartCount", 0}, {"state", {{"waiting", Json::object()}}}}})}})
          .run,
      PodRun::NotStarted);
  EXPECT_EQ(
      runOf({{"phase", "Pending"}, {"containerStatuses", Json::array({{{"restartCount", 2}}})}})
          .run,
      PodRun::Unknown);
  EXPECT_EQ(runOf({{"phase", "Pending"},
                   {"containerStatuses",
                    Json::array({{{"lastState", {{"terminated", {{"exitCode", 1}}}}}}})}})
                .run,
            PodRun::Unknown);
  EXPECT_EQ(runOf({{"phase", "Succeeded"}}).run, PodRun::Ended);
  EXPECT_EQ(runOf({{"phase", "Failed"}}).run, PodRun::Ended);
  EXPECT_EQ(runOf({{"phase", "Unknown"}}).run, PodRun::Unknown);
  EXPECT_EQ(runOf(Json::object()).run, PodRun::Unknown);
  EXPECT_TRUE(runOf({{"phase", "Unknown"}}).mayRun());
  EXPECT_TRUE(runOf({{"phase", "Failed"}}, true).mayRun()) << "a pod shutting down may flush";
}

TEST(ShardPods, AStatefulSetWithoutASelectorReadsNothing) {
  Json sts = statefulSet();
  sts["spec"].erase("selector");
  const std::vector<Json> pods{pod()};
  const ShardPods read = shardPods(sts, pods);
  EXPECT_TRUE(read.pods.empty());
  EXPECT_NE(read.problem, "");
}

TEST(ShardPods, VolumeClaimTemplatesAndReplicasAreRead) {
  Json sts = statefulSet();
  sts["spec"]["replicas"] = 0;
  sts["spec"]["volumeClaimTemplates"] = Json::array({{{"metadata", {{"name", "db"}}}}});
  const ShardPods read = shardPods(sts, {});
  EXPECT_EQ(read.replicas, 0);
  EXPECT_TRUE(read.keeps_volumes);
}

}  // namespace
}  // namespace shardscaler::ingestion
