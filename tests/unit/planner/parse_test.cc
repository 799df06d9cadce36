#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"

namespace shardscaler::planner {
namespace {

using testing::Json;

TEST(ParseTarget, ReadsSpecFields) {
  Json j = testing::targetJson(
      4,
      {{"paused", true},
       {"retention", "15d"},
       {"retentionSize", "10GB"},
       {"shardRetentionPolicy",
        {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "2d"}}}}},
       {"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b", "c"}}}}}}});
  j["metadata"]["annotations"] = {{"shardscaler.io/paused-by", "main"}};
  j["metadata"]["deletionTimestamp"] = "2026-11-22T09:00:00Z";
  auto t = parseTarget(j, TargetKind::Prometheus);
  ASSERT_TRUE(t.has_value()) << t.error().describe();
  EXPECT_EQ(t->uid, testing::kTargetUid);
  EXPECT_EQ(t->resource_version, "1001");
  EXPECT_TRUE(t->being_deleted);
  EXPECT_EQ(t->shards, 4);
  EXPECT_EQ(t->replicas, 2);
  EXPECT_TRUE(t->paused);
  EXPECT_EQ(t->retention, "15d");
  EXPECT_EQ(t->retention_size, "10GB");
  EXPECT_TRUE(t->has_retain);
  EXPECT_EQ(t->retain_period, "2d");
  EXPECT_EQ(t->when_scaled, "Retain");
  EXPECT_EQ(t->topologyZones(), 3u);
  EXPECT_EQ(t->annotations.at("shardscaler.io/paused-by"), "main");
}

TEST(ParseTarget, ShardsAsTheOperatorReadsThem) {
  const auto shards = [](Json spec) {
    Json j = testing::targetJson(1);
    j["spec"] = std::move(spec);
    return parseTarget(j, TargetKind::Prometheus)->effectiveShards();
  };
  EXPECT_EQ(shards(Json::object()), 1);  // absent: the CRD default
  EXPECT_EQ(shards({{"shards", 0}}), 1);
  EXPECT_EQ(shards({{"shards", -3}}), 1);
  EXPECT_EQ(shards({{"shards", 7}}), 7);
  Json address = testing::targetJson(2, {{"shardingStrategy", {{"mode", "Address"}}}});
  EXPECT_FALSE(parseTarget(address, TargetKind::Prometheus)->topologyZones().has_value());
}

TEST(ParseTarget, RejectsAnotherKindOrMissingIdentity) {
  Json j = testing::targetJson(3);
  EXPECT_EQ(parseTarget(j, TargetKind::PrometheusAgent).error().describe(),
            "kind: expected PrometheusAgent, got \"Prometheus\"");
  j["metadata"].erase("uid");
  EXPECT_EQ(parseTarget(j, TargetKind::Prometheus).error().describe(), "metadata.uid: required");
  Json agent = testing::targetJson(3, {}, {.kind = TargetKind::PrometheusAgent});
  agent.erase("kind");  // list items carry no kind
  EXPECT_TRUE(parseTarget(agent, TargetKind::PrometheusAgent).has_value());
}

TEST(ParseTarget, WrongTypesInSpecBecomeSpecErrors) {
  Json j = testing::targetJson(
      3, {{"paused", "yes"}, {"shardingStrategy", {{"topology", {{"values", {1}}}}}}});
  auto t = parseTarget(j, TargetKind::Prometheus);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->spec_errors.size(), 2u);
  EXPECT_EQ(t->spec_errors[0].describe(), "spec.paused: must be a boolean, got \"yes\"");
  EXPECT_EQ(t->spec_errors[1].describe(),
            "spec.shardingStrategy.topology.values: entries must be strings");
}

TEST(ParseStatefulSet, ReadsMetadata) {
  Json j = testing::retainedShard(3, "2026-11-25T10:00:00Z");
  j["metadata"]["deletionTimestamp"] = "2026-11-22T10:00:00Z";
  auto s = parseStatefulSet(j);
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->name, "prometheus-main-shard-3");
  EXPECT_EQ(s->uid, "sts-uid-3");
  EXPECT_EQ(s->resource_version, "503");
  EXPECT_TRUE(s->being_deleted);
  ASSERT_NE(s->label("shardscaler.io/retained"), nullptr);
  EXPECT_EQ(*s->annotation("operator.prometheus.io/deletion-timestamp"), "2026-11-25T10:00:00Z");
  ASSERT_EQ(s->owner_references.size(), 1u);
  EXPECT_EQ(s->owner_references[0].uid, testing::kTargetUid);
  EXPECT_TRUE(s->owner_references[0].controller);
}

TEST(ParseStatefulSet, RejectsWhatCouldMisattributeIt) {
  Json j = testing::attachedShard(1);
  j["metadata"]["labels"]["operator.prometheus.io/shard"] = 1;
  EXPECT_EQ(parseStatefulSet(j).error().describe(),
            "metadata.labels.operator.prometheus.io/shard: must be a string");
  Json k = testing::attachedShard(1);
  k["metadata"]["ownerReferences"] = "me";
  EXPECT_EQ(parseStatefulSet(k).error().describe(), "metadata.ownerReferences: must be a list");
  Json u = testing::attachedShard(1);
  u["metadata"].erase("uid");
  EXPECT_EQ(parseStatefulSet(u).error().describe(), "metadata.uid: required");
}

}  // namespace
}  // namespace shardscaler::planner
