#include <gtest/gtest.h>

#include "fixtures.h"
#include "shardscaler/retention/shard_set.h"
#include "shardscaler/retention/stateful_set.h"
#include "shardscaler/retention/target.h"

namespace shardscaler::retention {
namespace {

using testing::Json;

TEST(ParseShardSet, ReadsEveryField) {
  Json j = testing::shardSetJson(
      3, {{"minShards", 2},
          {"maxShards", 50},
          {"shardRetentionPolicy",
           {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "3d"}}}}}});
  j["status"]["conditions"] = Json::array({{{"type", "Ready"},
                                            {"status", "True"},
                                            {"reason", "ShardsReady"},
                                            {"message", "m"},
                                            {"lastTransitionTime", "2026-11-01T00:00:00Z"},
                                            {"observedGeneration", 3}},
                                           "garbage"});
  auto s = parseShardSet(j);
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->ns, "monitoring");
  EXPECT_EQ(s->name, "main");
  EXPECT_EQ(s->generation, 4);
  EXPECT_EQ(s->target_kind, "Prometheus");
  EXPECT_EQ(s->target_name, "main");
  EXPECT_EQ(s->shards, 3);
  EXPECT_EQ(s->min_shards, 2);
  EXPECT_EQ(s->max_shards, 50);
  EXPECT_EQ(s->when_scaled, "Retain");
  EXPECT_EQ(s->retention_period, "3d");
  ASSERT_EQ(s->conditions.size(), 1u);
  EXPECT_EQ(s->conditions[0].last_transition_time, "2026-11-01T00:00:00Z");
  EXPECT_TRUE(s->spec_errors.empty());
}

TEST(ParseShardSet, WrongTypesInSpecBecomeSpecErrors) {
  Json j = testing::shardSetJson(3, {{"maxShards", "50"}, {"minShards", 1.5}});
  j["spec"]["shards"] = "3";
  auto s = parseShardSet(j);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->spec_errors.size(), 3u);
  EXPECT_EQ(s->spec_errors[0].describe(), "spec.shards: must be an integer, got \"3\"");
  EXPECT_EQ(s->spec_errors[1].describe(), "spec.minShards: must be an integer, got 1.5");
  EXPECT_EQ(s->spec_errors[2].describe(), "spec.maxShards: must be an integer, got \"50\"");
  EXPECT_FALSE(s->shards.has_value());
}

TEST(ParseShardSet, EmptyRetentionPeriodIsUnset) {
  // The CRD pattern admits "", and the operator reads an empty Duration as unset.
  auto s = parseShardSet(testing::shardSetJson(
      3, {{"shardRetentionPolicy",
           {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", ""}}}}}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->retention_period.has_value());
  EXPECT_TRUE(s->spec_errors.empty());
}

TEST(ParseShardSet, FailsOnlyWithoutIdentity) {
  EXPECT_EQ(parseShardSet(Json::array()).error().describe(), "a ShardSet must be an object");
  Json j = testing::shardSetJson(3);
  j["metadata"].erase("name");
  EXPECT_EQ(parseShardSet(j).error().describe(), "metadata.name: required");
  j["metadata"]["name"] = 7;
  EXPECT_EQ(parseShardSet(j).error().describe(), "metadata.name: must be a string, got 7");
}

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
  Json agent = testing::targetJson(3, {}, "PrometheusAgent");
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

TEST(ParseStatefulSet, ReadsMetadataAndReplicas) {
  Json j = testing::retainedSts(3, "2026-11-25T10:00:00Z");
  j["metadata"]["deletionTimestamp"] = "2026-11-22T10:00:00Z";
  auto s = parseStatefulSet(j);
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->name, "prometheus-main-shard-3");
  EXPECT_EQ(s->uid, "sts-uid-3");
  EXPECT_EQ(s->resource_version, "503");
  EXPECT_TRUE(s->being_deleted);
  EXPECT_EQ(s->replicas, 2);
  ASSERT_NE(s->label("shardscaler.io/retained"), nullptr);
  EXPECT_EQ(*s->annotation("operator.prometheus.io/deletion-timestamp"), "2026-11-25T10:00:00Z");
  ASSERT_EQ(s->owner_references.size(), 1u);
  EXPECT_EQ(s->owner_references[0].uid, testing::kTargetUid);
  EXPECT_TRUE(s->owner_references[0].controller);
}

TEST(ParseStatefulSet, RejectsWhatCouldMisattributeIt) {
  Json j = testing::attachedSts(1);
  j["metadata"]["labels"]["operator.prometheus.io/shard"] = 1;
  EXPECT_EQ(parseStatefulSet(j).error().describe(),
            "metadata.labels.operator.prometheus.io/shard: must be a string");
  Json k = testing::attachedSts(1);
  k["metadata"]["ownerReferences"] = "me";
  EXPECT_EQ(parseStatefulSet(k).error().describe(), "metadata.ownerReferences: must be a list");
  Json u = testing::attachedSts(1);
  u["metadata"].erase("uid");
  EXPECT_EQ(parseStatefulSet(u).error().describe(), "metadata.uid: required");
}

}  // namespace
}  // namespace shardscaler::retention
