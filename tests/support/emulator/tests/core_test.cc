// Unit tests of the emulator's pure core: names, labels, selectors, the StatefulSet it builds,
// the input hash, metadata merging, the sharding relabelling, gzip, and the status it writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include <yaml-cpp/yaml.h>

#include "metadata_merge.h"
#include "prometheus_config.h"
#include "shard_naming.h"
#include "shardscaler/k8s_client/base64.h"
#include "statefulset_builder.h"
#include "status_report.h"

namespace shardscaler::emulator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Json target(const std::string& name, Json spec) {
  return Json{
      {"metadata", {{"name", name}, {"namespace", "mon"}, {"uid", "u-1"}, {"generation", 4}}},
      {"spec", std::move(spec)}};
}

Json env(const Json& container) {
  Json out = Json::object();
  for (const auto& e : container["env"]) out[e["name"].get<std::string>()] = e.value("value", "");
  return out;
}

TEST(ShardNamingTest, ShardZeroHasNoSuffixAndOthersAreNumbered) {
  EXPECT_THAT(expectedStatefulSetNames(prometheusKind(), target("main", {{"shards", 3}})),
              ElementsAre("prometheus-main", "prometheus-main-shard-1", "prometheus-main-shard-2"));
  EXPECT_THAT(expectedStatefulSetNames(prometheusAgentKind(), target("a", {{"shards", 2}})),
              ElementsAre("prom-agent-a", "prom-agent-a-shard-1"));
}

TEST(ShardNamingTest, ShardsAtMostOneMeanOne) {
  for (const Json& spec : {Json::object(), Json{{"shards", 0}}, Json{{"shards", -2}},
                           Json{{"shards", nullptr}}, Json{{"shards", 1}}}) {
    EXPECT_EQ(shardsNumber(target("m", spec)), 1) << spec;
  }
  EXPECT_EQ(specShardsOrOne(target("m", {{"shards", 0}})), 0);  // status reports it as given
  EXPECT_EQ(specShardsOrOne(target("m", Json::object())), 1);
}

TEST(ShardNamingTest, ReplicasDefaultToOneAndZeroStays) {
  EXPECT_EQ(replicasNumber(target("m", Json::object())), 1);
  EXPECT_EQ(replicasNumber(target("m", {{"replicas", 0}})), 0);
  EXPECT_EQ(replicasNumber(target("m", {{"replicas", -1}})), 1);
  EXPECT_EQ(replicasNumber(target("m", {{"replicas", 3}})), 3);
}

TEST(ShardNamingTest, ShardOfStatefulSetNameRejectsOtherNames) {
  const auto& kind = prometheusKind();
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prometheus-main"), 0);
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prometheus-main-shard-12"), 12);
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prometheus-main-shard-01"), std::nullopt);
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prometheus-main-shard-0"), std::nullopt);
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prometheus-mainx"), std::nullopt);
  EXPECT_EQ(shardOfStatefulSetName(kind, "main", "prom-agent-main"), std::nullopt);
}

TEST(ShardNamingTest, InformerSelectorIsTheOperators) {
  EXPECT_EQ(statefulSetInformerSelector(prometheusKind()),
            "managed-by in (prometheus-operator),operator.prometheus.io/shard,"
            "operator.prometheus.io/name,operator.prometheus.io/mode in (server)");
  EXPECT_THAT(statefulSetInformerSelector(prometheusAgentKind()), HasSubstr("in (agent)"));
}

TEST(ShardNamingTest, ScaleSelectorIsSortedSelectorLabels) {
  EXPECT_EQ(selectorString(selectorLabels(prometheusKind(), "main")),
            "app.kubernetes.io/instance=main,app.kubernetes.io/managed-by=prometheus-operator,"
            "app.kubernetes.io/name=prometheus,operator.prometheus.io/name=main,prometheus=main");
  EXPECT_EQ(selectorString(selectorLabels(prometheusAgentKind(), "a")),
            "app.kubernetes.io/instance=a,app.kubernetes.io/managed-by=prometheus-operator,"
            "app.kubernetes.io/name=prometheus-agent,operator.prometheus.io/name=a");
}

TEST(StatefulSetBuilderTest, ServerShardHasLabelsSelectorOwnerAndShardEnv) {
  Json t = target("main", {{"shards", 3}, {"replicas", 2}});
  t["metadata"]["labels"] = {{"team", "obs"}, {"operator.prometheus.io/name", "spoofed"}};
  t["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                                  {"note", "x"}};
  Json sts = makeStatefulSet(prometheusKind(), t, 2, "123");
  EXPECT_EQ(sts["metadata"]["name"], "prometheus-main-shard-2");
  EXPECT_EQ(sts["metadata"]["namespace"], "mon");
  const Json& labels = sts["metadata"]["labels"];
  EXPECT_EQ(labels["managed-by"], "prometheus-operator");
  EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "prometheus-operator");
  EXPECT_EQ(labels["app.kubernetes.io/name"], "prometheus");
  EXPECT_EQ(labels["app.kubernetes.io/instance"], "main");
  EXPECT_EQ(labels["operator.prometheus.io/name"], "main");  // selector labels win
  EXPECT_EQ(labels["operator.prometheus.io/shard"], "2");
  EXPECT_EQ(labels["operator.prometheus.io/mode"], "server");
  EXPECT_EQ(labels["prometheus"], "main");
  EXPECT_EQ(labels["team"], "obs");
  const Json& annotations = sts["metadata"]["annotations"];
  EXPECT_EQ(annotations["prometheus-operator-input-hash"], "123");
  EXPECT_EQ(annotations["note"], "x");
  EXPECT_FALSE(annotations.contains("kubectl.kubernetes.io/last-applied-configuration"));
  const Json& owner = sts["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Prometheus");
  EXPECT_EQ(owner["apiVersion"], "monitoring.coreos.com/v1");
  EXPECT_EQ(owner["uid"], "u-1");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], true);
  EXPECT_EQ(sts["spec"]["replicas"], 2);
  EXPECT_EQ(sts["spec"]["serviceName"], "prometheus-operated");
  EXPECT_EQ(sts["spec"]["podManagementPolicy"], "Parallel");
  EXPECT_EQ(sts["spec"]["selector"]["matchLabels"]["operator.prometheus.io/shard"], "2");
  EXPECT_FALSE(sts["spec"]["selector"]["matchLabels"].contains("operator.prometheus.io/mode"));
  const Json& pod = sts["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["operator.prometheus.io/name"], "main");
  EXPECT_EQ(pod["metadata"]["labels"]["operator.prometheus.io/shard"], "2");
  EXPECT_EQ(pod["spec"]["terminationGracePeriodSeconds"], 600);
  EXPECT_EQ(pod["spec"]["containers"][0]["name"], "prometheus");
  EXPECT_EQ(pod["spec"]["containers"][1]["name"], "config-reloader");
  EXPECT_EQ(env(pod["spec"]["containers"][1])["SHARD"], "2");
  EXPECT_EQ(env(pod["spec"]["initContainers"][0])["SHARD"], "2");
  EXPECT_EQ(pod["spec"]["volumes"][0]["secret"]["secretName"], "prometheus-main");
}

TEST(StatefulSetBuilderTest, AgentShardUsesAgentNamesAndNoPrometheusLabel) {
  Json sts = makeStatefulSet(prometheusAgentKind(), target("a", {{"shards", 2}}), 1, "9");
  EXPECT_EQ(sts["metadata"]["name"], "prom-agent-a-shard-1");
  EXPECT_EQ(sts["metadata"]["labels"]["operator.prometheus.io/mode"], "agent");
  EXPECT_EQ(sts["metadata"]["labels"]["app.kubernetes.io/name"], "prometheus-agent");
  EXPECT_FALSE(sts["metadata"]["labels"].contains("prometheus"));
  EXPECT_EQ(sts["metadata"]["ownerReferences"][0]["kind"], "PrometheusAgent");
  EXPECT_EQ(sts["spec"]["serviceName"], "prometheus-agent-operated");
  EXPECT_EQ(sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 600);
}

TEST(StatefulSetBuilderTest, InputHashFollowsGenerationAndIgnoresRevisionHistoryLimit) {
  Json t = target("m", {{"shards", 2}});
  Json spec{{"replicas", 1}, {"revisionHistoryLimit", 10}};
  const std::string hash = statefulSetInputHash(t, spec);
  spec["revisionHistoryLimit"] = 3;
  EXPECT_EQ(statefulSetInputHash(t, spec), hash);
  spec["replicas"] = 2;
  EXPECT_NE(statefulSetInputHash(t, spec), hash);
  Json newer = t;
  newer["metadata"]["generation"] = 5;
  EXPECT_NE(statefulSetInputHash(newer, Json{{"replicas", 1}}),
            statefulSetInputHash(t, Json{{"replicas", 1}}));
}

TEST(MetadataMergeTest, KeepsForeignKeysDropsOperatorKeysDesiredWins) {
  Json existing{
      {"metadata",
       {{"resourceVersion", "77"},
        {"labels", {{"shardscaler.io/retained", "true"}, {"team", "old"}}},
        {"annotations", {{"operator.prometheus.io/deletion-timestamp", "x"}, {"keep", "1"}}}}}};
  Json desired{{"metadata", {{"labels", {{"team", "new"}}}, {"annotations", Json::object()}}}};
  mergeMetadata(desired, existing);
  EXPECT_EQ(desired["metadata"]["resourceVersion"], "77");
  EXPECT_EQ(desired["metadata"]["labels"]["team"], "new");
  EXPECT_EQ(desired["metadata"]["labels"]["shardscaler.io/retained"], "true");
  EXPECT_EQ(desired["metadata"]["annotations"]["keep"], "1");
  EXPECT_FALSE(
      desired["metadata"]["annotations"].contains("operator.prometheus.io/deletion-timestamp"));
}

TEST(MetadataMergeTest, OwnerReferencesAreAUnion) {
  Json a{{"uid", "1"}, {"name", "a"}};
  Json b{{"uid", "2"}, {"name", "b"}};
  EXPECT_EQ(mergeOwnerReferences(Json::array({a}), Json::array({a, b})), Json::array({a, b}));
}

TEST(PrometheusConfigTest, AdditionalScrapeConfigsGetHashmodWithModulusShards) {
  const std::string additional = "- job_name: static\n  static_configs:\n  - targets: [a:1]\n";
  auto config = generateConfiguration(
      prometheusKind(), target("main", {{"shards", 3}, {"serviceMonitorSelector", Json::object()}}),
      additional);
  ASSERT_TRUE(config) << config.error().message;
  YAML::Node doc = YAML::Load(*config);
  EXPECT_EQ(doc["global"]["external_labels"]["prometheus"].as<std::string>(), "mon/main");
  YAML::Node relabel = doc["scrape_configs"][0]["relabel_configs"];
  ASSERT_EQ(relabel.size(), 3u);
  EXPECT_EQ(relabel[1]["action"].as<std::string>(), "hashmod");
  EXPECT_EQ(relabel[1]["modulus"].as<int>(), 3);
  EXPECT_EQ(relabel[2]["regex"].as<std::string>(), "$(SHARD);|.+;.+");
  EXPECT_EQ(relabel[2]["action"].as<std::string>(), "keep");
}

TEST(PrometheusConfigTest, OneShardAndExistingHashmodAreLeftAlone) {
  const std::string additional = "- job_name: j\n  static_configs: [{targets: [a:1]}]\n";
  auto one = generateConfiguration(prometheusAgentKind(), target("a", {{"shards", 1}}), additional);
  ASSERT_TRUE(one);
  EXPECT_FALSE(YAML::Load(*one)["scrape_configs"][0]["relabel_configs"]);
  const std::string own =
      "- job_name: j\n  relabel_configs:\n  - {action: hashmod, modulus: 7, "
      "source_labels: [x], target_label: y}\n";
  auto kept = generateConfiguration(prometheusAgentKind(), target("a", {{"shards", 2}}), own);
  ASSERT_TRUE(kept);
  YAML::Node relabel = YAML::Load(*kept)["scrape_configs"][0]["relabel_configs"];
  ASSERT_EQ(relabel.size(), 1u);
  EXPECT_EQ(relabel[0]["modulus"].as<int>(), 7);
}

TEST(PrometheusConfigTest, BadAdditionalScrapeConfigsAreInvalid) {
  auto config = generateConfiguration(prometheusAgentKind(), target("a", {}), "job: 1\n");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().kind, k8s::ErrorKind::Invalid);
}

TEST(PrometheusConfigTest, UnmanagedOnlyForServersWithoutSelectors) {
  EXPECT_TRUE(unmanagedConfiguration(prometheusKind(), target("m", {})));
  EXPECT_FALSE(unmanagedConfiguration(prometheusKind(),
                                      target("m", {{"podMonitorSelector", Json::object()}})));
  EXPECT_FALSE(unmanagedConfiguration(prometheusAgentKind(), target("m", {})));
}

TEST(PrometheusConfigTest, SecretDataRoundTripsThroughGzipAndBase64) {
  Json secret = makeConfigSecret(prometheusKind(), target("main", {}), "global: {}\n");
  EXPECT_EQ(secret["metadata"]["name"], "prometheus-main");
  auto compressed = k8s::base64Decode(secret["data"]["prometheus.yaml.gz"].get<std::string>());
  ASSERT_TRUE(compressed);
  ASSERT_GE(compressed->size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);  // gzip magic
  auto text = gzipDecompress(*compressed);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "global: {}\n");
  EXPECT_FALSE(gzipDecompress("not gzip"));
}

TEST(StatusReportTest, CountsPodsPerShardAndReportsMissingShards) {
  Json t = target("main", {{"shards", 2}, {"replicas", 1}});
  Json sts{{"metadata", {{"name", "prometheus-main"}}}, {"status", {{"updateRevision", "rev-1"}}}};
  Json ready_pod{
      {"metadata",
       {{"name", "prometheus-main-0"}, {"labels", {{"controller-revision-hash", "rev-1"}}}}},
      {"status",
       {{"phase", "Running"},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  std::vector<ShardObservation> shards{
      {.shard = 0, .statefulset_name = "prometheus-main", .statefulset = sts, .pods = {ready_pod}},
      {.shard = 1, .statefulset_name = "prometheus-main-shard-1"}};
  const auto now = std::chrono::system_clock::time_point{} + std::chrono::hours(24 * 365 * 56);
  Json status = buildStatusPatch(prometheusKind(), t, shards, ReconcileOutcome{}, now)["status"];
  EXPECT_EQ(status["replicas"], 1);
  EXPECT_EQ(status["availableReplicas"], 1);
  EXPECT_EQ(status["updatedReplicas"], 1);
  EXPECT_EQ(status["shards"], 2);
  EXPECT_EQ(status["paused"], false);
  EXPECT_EQ(status["shardStatuses"].size(), 2u);
  EXPECT_EQ(status["shardStatuses"][1]["shardID"], "1");
  EXPECT_EQ(status["conditions"][0]["type"], "Available");
  EXPECT_EQ(status["conditions"][0]["status"], "False");
  EXPECT_EQ(status["conditions"][0]["reason"], "StatefulSetNotFound");
  EXPECT_EQ(status["conditions"][1]["type"], "Reconciled");
  EXPECT_EQ(status["conditions"][1]["status"], "True");
  EXPECT_THAT(status["selector"].get<std::string>(), HasSubstr("operator.prometheus.io/name=main"));
}

TEST(StatusReportTest, TransitionTimeIsKeptWhileTheStatusHolds) {
  Json t = target("main", {});
  t["status"]["conditions"] = Json::array(
      {{{"type", "Reconciled"}, {"status", "True"}, {"lastTransitionTime", "2020-01-01T00:00:00Z"}},
       {{"type", "Available"},
        {"status", "True"},
        {"lastTransitionTime", "2020-01-01T00:00:00Z"}}});
  Json status =
      buildStatusPatch(prometheusKind(), t, {}, ReconcileOutcome{.ok = false, .message = "boom"},
                       std::chrono::system_clock::now())["status"];
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2020-01-01T00:00:00Z");  // Available
  EXPECT_NE(status["conditions"][1]["lastTransitionTime"], "2020-01-01T00:00:00Z");  // Reconciled
  EXPECT_EQ(status["conditions"][1]["reason"], "ReconciliationFailed");
  EXPECT_EQ(status["conditions"][1]["message"], "boom");
}

}  // namespace
}  // namespace shardscaler::emulator
