// The ingestion queries: default per kind, the override's placeholders, escaping, and the pod
// naming that maps a pod to its shard (and agrees with the pod regex sent to Prometheus).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "shardscaler/ingestion/ingestion_query.h"

namespace shardscaler::ingestion {
namespace ingestion_query_test {
namespace {

using planner::TargetKind;

IngestionTarget target(TargetKind kind = TargetKind::Prometheus, std::string name = "main",
                       std::string query = "") {
  IngestionTarget t;
  t.ns = "monitoring";
  t.shard_set = "main";
  t.kind = kind;
  t.target_name = std::move(name);
  t.prometheus_url = "http://prometheus:9090";
  t.query = std::move(query);
  return t;
}

TEST(IngestionQueryTest, DefaultQueryOfAPrometheusFillsNamespaceAndPods) {
  EXPECT_EQ(ingestionQuery(target()),
            "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace="
            "\"monitoring\",pod=~\"prometheus-main(-shard-[1-9][0-9]*)?-(0|[1-9][0-9]*)\"}[5m]))");
}

TEST(IngestionQueryTest, DefaultQueryOfAnAgentUsesTheAgentCounterAndPrefix) {
  EXPECT_EQ(ingestionQuery(target(TargetKind::PrometheusAgent)),
            "sum by (pod) (rate(prometheus_agent_samples_appended_total{namespace="
            "\"monitoring\",pod=~\"prom-agent-main(-shard-[1-9][0-9]*)?-(0|[1-9][0-9]*)\"}[5m]))");
}

TEST(IngestionQueryTest, OverrideGetsEveryPlaceholderReplaced) {
  auto t = target(TargetKind::Prometheus, "main",
                  "sum by (pod) (rate(x{namespace=\"$NAMESPACE\",pod=~\"$POD_REGEX\"}[30s])) "
                  "or on() vector(0) * count(y{namespace=\"$NAMESPACE\"})");
  EXPECT_EQ(ingestionQuery(t),
            "sum by (pod) (rate(x{namespace=\"monitoring\",pod=~\"prometheus-main(-shard-[1-9]"
            "[0-9]*)?-(0|[1-9][0-9]*)\"}[30s])) or on() vector(0) * count(y{namespace="
            "\"monitoring\"})");
}

TEST(IngestionQueryTest, OverrideWithoutPlaceholdersIsSentAsWritten) {
  auto t = target(TargetKind::Prometheus, "main", "sum by (pod) (rate(x[1m])) $NAMESPACEX");
  // "$NAMESPACEX" starts with a placeholder: it is replaced, the X stays.
  EXPECT_EQ(ingestionQuery(t), "sum by (pod) (rate(x[1m])) monitoringX");
  t.query = "sum by (pod) (rate(x[1m]))";
  EXPECT_EQ(ingestionQuery(t), "sum by (pod) (rate(x[1m]))");
}

TEST(IngestionQueryTest, RegexMetaCharactersInNamesAreEscapedForRegexAndPromql) {
  EXPECT_EQ(escapeRegex("a.b+c(d)|e[f]{g}^$*?\\"),
            "a\\.b\\+c\\(d\\)\\|e\\[f\\]\\{g\\}\\^\\$\\*\\?\\\\");
  EXPECT_EQ(escapePromqlString("a\\.b\"c\nd"), "a\\\\.b\\\"c\\nd");
  // A dotted name (DNS subdomain names are allowed for Prometheus objects): the regex has
  // \. and the PromQL string literal carries it as \\.
  EXPECT_EQ(targetPodRegex(TargetKind::Prometheus, "my.prom"),
            "prometheus-my\\.prom(-shard-[1-9][0-9]*)?-(0|[1-9][0-9]*)");
  EXPECT_EQ(ingestionQuery(target(TargetKind::Prometheus, "my.prom", "{pod=~\"$POD_REGEX\"}")),
            "{pod=~\"prometheus-my\\\\.prom(-shard-[1-9][0-9]*)?-(0|[1-9][0-9]*)\"}");
}

TEST(IngestionQueryTest, PodsMapToShardsByTheStatefulSetNaming) {
  const auto P = TargetKind::Prometheus;
  EXPECT_EQ(shardOfPod(P, "main", "prometheus-main-0"), 0);
  EXPECT_EQ(shardOfPod(P, "main", "prometheus-main-1"), 0);  // replica 1 of shard 0
  EXPECT_EQ(shardOfPod(P, "main", "prometheus-main-shard-1-0"), 1);
  EXPECT_EQ(shardOfPod(P, "main", "prometheus-main-shard-12-3"), 12);
  EXPECT_EQ(shardOfPod(TargetKind::PrometheusAgent, "main", "prom-agent-main-shard-2-0"), 2);
  // A target whose own name looks like a shard suffix.
  EXPECT_EQ(shardOfPod(P, "main-shard-1", "prometheus-main-shard-1-0"), 0);
  EXPECT_EQ(shardOfPod(P, "main-shard-1", "prometheus-main-shard-1-shard-2-0"), 2);
}

TEST(IngestionQueryTest, PodsThatAreNotTheTargetsMapToNothing) {
  const auto P = TargetKind::Prometheus;
  for (const char* pod :
       {"", "prometheus-main", "prometheus-main-", "prometheus-main-00", "prometheus-main-x",
        "prometheus-main-shard-0-0", "prometheus-main-shard-01-0", "prometheus-main-shard--0",
        "prometheus-main-shard-1", "prometheus-mainx-0", "prometheus-other-0", "prom-agent-main-0",
        "prometheus-main-x-0", "xprometheus-main-0", "prometheus-main-shard-99999999999-0"}) {
    EXPECT_EQ(shardOfPod(P, "main", pod), std::nullopt) << pod;
  }
}

// The regex sent to Prometheus (fully anchored, as label matchers are) selects exactly the pods
// that shardOfPod attributes to the target.
TEST(IngestionQueryTest, PodRegexAndShardMappingAgree) {
  const std::regex re(targetPodRegex(TargetKind::Prometheus, "main"));
  const std::vector<std::string> pods = {"prometheus-main-0",         "prometheus-main-1",
                                         "prometheus-main-10",        "prometheus-main-shard-1-0",
                                         "prometheus-main-shard-9-2", "prometheus-main-shard-10-0",
                                         "prometheus-main",           "prometheus-main-01",
                                         "prometheus-main-shard-0-0", "prometheus-main-shard-01-0",
                                         "prometheus-mainx-0",        "prometheus-other-0",
                                         "prometheus-main-x-0",       "prometheus-main-shard-1",
                                         "prom-agent-main-0"};
  for (const auto& pod : pods) {
    EXPECT_EQ(std::regex_match(pod, re),
              shardOfPod(TargetKind::Prometheus, "main", pod).has_value())
        << pod;
  }
}

}  // namespace
}  // namespace ingestion_query_test
}  // namespace shardscaler::ingestion
