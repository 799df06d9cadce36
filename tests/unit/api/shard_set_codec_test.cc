// The ShardSet decoder (spec fields, errors named by their path, conditions) and the encoders of
// spec and status.
#include <gtest/gtest.h>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/shard_set_status.h"

namespace shardscaler::api {
namespace {

using Json = nlohmann::json;

Json shardSetJson(const Json& spec_patch = Json::object()) {
  Json j{{"apiVersion", "shardscaler.io/v1alpha1"},
         {"kind", "ShardSet"},
         {"metadata", {{"name", "main"}, {"namespace", "monitoring"}, {"generation", 4}}},
         {"spec", {{"targetRef", {{"kind", "Prometheus"}, {"name", "main"}}}, {"shards", 3}}}};
  j["spec"].merge_patch(spec_patch);
  return j;
}

TEST(DecodeShardSet, ReadsEveryField) {
  Json j = shardSetJson({{"minShards", 2},
                         {"maxShards", 50},
                         {"shardRetentionPolicy",
                          {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", "3d"}}}}},
                         {"ingestion",
                          {{"prometheusURL", "http://prom:9090"},
                           {"query", "up"},
                           {"interval", "15s"},
                           {"targetSamplesPerShard", 500000}}}});
  j["status"]["conditions"] = Json::array({{{"type", "Ready"},
                                            {"status", "True"},
                                            {"reason", "ShardsReady"},
                                            {"message", "m"},
                                            {"lastTransitionTime", "2026-11-01T00:00:00Z"},
                                            {"observedGeneration", 3}},
                                           "garbage",
                                           {{"status", "True"}}});
  auto s = decodeShardSet(j);
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->ns, "monitoring");
  EXPECT_EQ(s->name, "main");
  EXPECT_EQ(s->generation, 4);
  EXPECT_EQ(s->spec.target_ref.kind, "Prometheus");
  EXPECT_EQ(s->spec.target_ref.name, "main");
  EXPECT_EQ(s->spec.shards, 3);
  EXPECT_EQ(s->spec.min_shards, 2);
  EXPECT_EQ(s->spec.max_shards, 50);
  EXPECT_EQ(s->spec.shard_retention_policy.when_scaled, "Retain");
  EXPECT_EQ(s->spec.shard_retention_policy.retain.retention_period, "3d");
  ASSERT_TRUE(s->spec.ingestion.has_value());
  EXPECT_EQ(s->spec.ingestion->prometheus_url, "http://prom:9090");
  EXPECT_EQ(s->spec.ingestion->query, "up");
  EXPECT_EQ(s->spec.ingestion->interval, "15s");
  EXPECT_EQ(s->spec.ingestion->target_samples_per_shard, 500000);
  ASSERT_EQ(s->conditions.size(), 1u);
  EXPECT_EQ(s->conditions[0],
            (Condition{"Ready", "True", "ShardsReady", "m", "2026-11-01T00:00:00Z", 3}));
  EXPECT_TRUE(s->spec_errors.empty());
  EXPECT_TRUE(s->ingestion_errors.empty());
  // Decoding and encoding the spec gives back what was written.
  EXPECT_EQ(toJson(s->spec), j["spec"]);
}

TEST(DecodeShardSet, WrongTypesInSpecBecomeSpecErrors) {
  Json j = shardSetJson({{"maxShards", "50"}, {"minShards", 1.5}});
  j["spec"]["shards"] = "3";
  auto s = decodeShardSet(j);
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->spec_errors.size(), 3u);
  EXPECT_EQ(s->spec_errors[0].describe(), "spec.shards: must be an integer, got \"3\"");
  EXPECT_EQ(s->spec_errors[1].describe(), "spec.minShards: must be an integer, got 1.5");
  EXPECT_EQ(s->spec_errors[2].describe(), "spec.maxShards: must be an integer, got \"50\"");
  EXPECT_FALSE(s->spec.shards.has_value());
  EXPECT_TRUE(s->ingestion_errors.empty());
}

TEST(DecodeShardSet, IngestionErrorsAreKeptApartFromTheShardCount) {
  auto s =
      decodeShardSet(shardSetJson({{"ingestion", {{"prometheusURL", 9090}, {"interval", 5}}}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->spec_errors.empty());
  ASSERT_EQ(s->ingestion_errors.size(), 2u);
  EXPECT_EQ(s->ingestion_errors[0].describe(),
            "spec.ingestion.prometheusURL: must be a string, got 9090");
  EXPECT_EQ(s->ingestion_errors[1].describe(), "spec.ingestion.interval: must be a string, got 5");
  ASSERT_TRUE(s->spec.ingestion.has_value());
  EXPECT_FALSE(s->spec.ingestion->prometheus_url.has_value());

  s = decodeShardSet(shardSetJson({{"ingestion", "yes"}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->spec.ingestion.has_value());
  ASSERT_EQ(s->ingestion_errors.size(), 1u);
  EXPECT_EQ(s->ingestion_errors[0].describe(), "spec.ingestion: must be an object");
}

TEST(DecodeShardSet, EmptyRetentionPeriodIsUnset) {
  // The CRD pattern admits "", and the operator reads an empty Duration as unset.
  auto s = decodeShardSet(
      shardSetJson({{"shardRetentionPolicy",
                     {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", ""}}}}}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->spec.shard_retention_policy.retain.retention_period.has_value());
  EXPECT_TRUE(s->spec_errors.empty());
}

TEST(DecodeShardSet, ReadsTheDrain) {
  auto s = decodeShardSet(shardSetJson({{"shardRetentionPolicy",
                                         {{"drain",
                                           {{"enabled", true},
                                            {"prometheusURL", "http://prom:9090"},
                                            {"condition", "up{pod=~\"$POD_REGEX\"}"},
                                            {"maxLagSeconds", 10},
                                            {"timeoutSeconds", 600},
                                            {"onTimeout", "Delete"}}}}}}));
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->spec.shard_retention_policy.drain);
  const DrainSpec& d = *s->spec.shard_retention_policy.drain;
  EXPECT_EQ(d.enabled, true);
  EXPECT_EQ(d.prometheus_url, "http://prom:9090");
  EXPECT_EQ(d.condition, "up{pod=~\"$POD_REGEX\"}");
  EXPECT_EQ(d.max_lag_seconds, 10);
  EXPECT_EQ(d.timeout_seconds, 600);
  EXPECT_EQ(d.on_timeout, "Delete");
  EXPECT_TRUE(s->spec_errors.empty());
  EXPECT_EQ(toJson(s->spec)["shardRetentionPolicy"]["drain"]["maxLagSeconds"], 10);

  auto wrong = decodeShardSet(shardSetJson(
      {{"shardRetentionPolicy", {{"drain", {{"enabled", "yes"}, {"maxLagSeconds", "30s"}}}}}}));
  ASSERT_TRUE(wrong);
  ASSERT_EQ(wrong->spec_errors.size(), 2u);
  EXPECT_EQ(wrong->spec_errors[0].field, "spec.shardRetentionPolicy.drain.enabled");
  EXPECT_EQ(wrong->spec_errors[1].field, "spec.shardRetentionPolicy.drain.maxLagSeconds");
}

TEST(DecodeShardSet, FailsOnlyWithoutIdentity) {
  EXPECT_EQ(decodeShardSet(Json::array()).error().describe(), "a ShardSet must be an object");
  Json j = shardSetJson();
  j["metadata"].erase("name");
  EXPECT_EQ(decodeShardSet(j).error().describe(), "metadata.name: required");
  j["metadata"]["name"] = 7;
  EXPECT_EQ(decodeShardSet(j).error().describe(), "metadata.name: must be a string, got 7");
  j = shardSetJson();
  j.erase("spec");
  auto s = decodeShardSet(j);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->spec.target_ref.kind, "");
  EXPECT_FALSE(s->spec.ingestion.has_value());
}

TEST(ShardSetStatusJson, LeavesUnsetOptionalFieldsOut) {
  ShardSetStatus status;
  status.observed_generation = 4;
  status.shards = 2;
  status.selector = "s";
  EXPECT_EQ(toJson(status), (Json{{"observedGeneration", 4},
                                  {"shards", 2},
                                  {"selector", "s"},
                                  {"retainedShards", Json::array()},
                                  {"conditions", Json::array()}}));
}

TEST(ShardSetStatusJson, WritesEveryField) {
  ShardSetStatus status;
  status.observed_generation = 4;
  status.shards = 2;
  status.selector = "s";
  status.target_shards = 3;
  status.retained_shards = {{.index = 5,
                             .stateful_set = "prometheus-main-shard-5",
                             .deletion_timestamp = "2026-11-25T10:00:00Z",
                             .phase = "Draining",
                             .lag_seconds = 42.5,
                             .draining_since = "2026-11-25T10:00:01Z"}};
  status.retained_count = 1;
  status.draining_count = 1;
  status.recommended_shards = 4;
  status.ingestion = IngestionStatus{1.5, {{0, 1.5}}, "2026-11-22T10:00:00Z", ""};
  status.conditions = {{"Ready", "True", "ShardsReady", "m", "2026-11-01T00:00:00Z", 4}};
  EXPECT_EQ(toJson(status), Json::parse(R"({
    "observedGeneration": 4, "shards": 2, "selector": "s", "targetShards": 3,
    "retainedShards": [{"index": 5, "statefulSet": "prometheus-main-shard-5",
                        "deletionTimestamp": "2026-11-25T10:00:00Z", "phase": "Draining",
                        "lagSeconds": 42.5, "drainingSince": "2026-11-25T10:00:01Z"}],
    "retainedCount": 1, "drainingCount": 1, "recommendedShards": 4,
    "ingestion": {"totalSamplesPerSecond": 1.5, "perShard": [{"index": 0, "samplesPerSecond": 1.5}],
                  "lastUpdate": "2026-11-22T10:00:00Z", "error": ""},
    "conditions": [{"type": "Ready", "status": "True", "reason": "ShardsReady", "message": "m",
                    "lastTransitionTime": "2026-11-01T00:00:00Z", "observedGeneration": 4}]})"));
}

}  // namespace
}  // namespace shardscaler::api
