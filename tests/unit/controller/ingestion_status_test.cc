// The ingestion part of ShardSet.status: spec.ingestion parsing, status.ingestion and
// recommendedShards, the IngestionAvailable condition and the Events of its transitions.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "shardscaler/controller/status_from_plan.h"
#include "shardscaler/ingestion/ingestion_result.h"
#include "shardscaler/ingestion/ingestion_status.h"

namespace shardscaler::controller {
namespace {

using api::Condition;
using k8s::Json;
using namespace std::chrono_literals;

const auto kNow =
    std::chrono::system_clock::time_point(std::chrono::sys_days(std::chrono::year_month_day(
        std::chrono::year(2026), std::chrono::month(3), std::chrono::day(1)))) +
    10h;

// The ShardSet as the controller reads it: through the API's decoder.
api::ShardSet shardSetWith(Json ingestion, Json conditions = Json::array()) {
  Json ss = {{"metadata", {{"namespace", "monitoring"}, {"name", "main"}, {"generation", 4}}},
             {"spec",
              {{"targetRef", {{"kind", "Prometheus"}, {"name", "main"}}},
               {"shards", 3},
               {"minShards", 2},
               {"maxShards", 8}}},
             {"status", {{"conditions", std::move(conditions)}}}};
  if (!ingestion.is_null()) ss["spec"]["ingestion"] = std::move(ingestion);
  auto decoded = api::decodeShardSet(ss);
  if (!decoded) throw std::runtime_error(decoded.error().describe());
  return *decoded;
}

Json validIngestion() {
  return {{"prometheusURL", "http://prom:9090"},
          {"interval", "15s"},
          {"targetSamplesPerShard", 500000}};
}

ingestion::IngestionSnapshot goodSnapshot() {
  ingestion::IngestionSnapshot s;
  s.per_shard = {{0, 4e5}, {1, 5e5}, {2, 3e5}};
  s.total_samples_per_second = 1.2e6;
  s.last_update = "2026-03-01T09:59:58Z";
  s.recommended_shards = 3;
  return s;
}

ingestion::IngestionSnapshot failedSnapshot(std::string_view reason) {
  ingestion::IngestionSnapshot s;
  s.last_update = "2026-03-01T09:59:58Z";
  s.error = "transport: connection refused";
  s.error_reason = std::string(reason);
  return s;
}

planner::Plan planFor(const api::ShardSet& ss) {
  planner::Plan plan;
  plan.status.observed_generation = ss.generation;
  plan.status.shards = 3;
  return plan;
}

const Json* conditionIn(const Json& status, std::string_view type) {
  for (const Json& c : status["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST(IngestionStatusTest, IngestionTargetReadsSpecIngestionAndTheClamps) {
  std::string problem;
  auto t = ingestionTarget(shardSetWith(validIngestion()), &problem);
  ASSERT_TRUE(t.has_value()) << problem;
  EXPECT_EQ(t->ns, "monitoring");
  EXPECT_EQ(t->shard_set, "main");
  EXPECT_EQ(t->target_name, "main");
  EXPECT_EQ(t->prometheus_url, "http://prom:9090");
  EXPECT_EQ(t->interval, 15s);
  EXPECT_EQ(t->target_samples_per_shard, 500000);
  EXPECT_EQ(t->min_shards, 2);
  EXPECT_EQ(t->max_shards, 8);
  EXPECT_EQ(t->zones, std::nullopt);
}

// Without a URL the shards' own pods are read.
TEST(IngestionStatusTest, WithoutAUrlTheTargetReadsThePods) {
  std::string problem;
  auto t = ingestionTarget(shardSetWith(Json{{"interval", "30s"}}), &problem);
  ASSERT_TRUE(t.has_value()) << problem;
  EXPECT_EQ(t->prometheus_url, "");
  EXPECT_EQ(t->interval, 30s);
}

TEST(IngestionStatusTest, IngestionTargetReportsUnusableSpecs) {
  for (const auto& [ingestion, expected] : std::vector<std::pair<Json, std::string>>{
           {Json{{"interval", 30}}, "interval"},
           {Json{{"prometheusURL", "http://p"}, {"interval", "500ms"}}, "below 1s"},
           {Json{{"prometheusURL", "http://p"}, {"interval", "x"}}, "interval"},
           {Json{{"prometheusURL", "http://p"}, {"targetSamplesPerShard", 0}},
            "targetSamplesPerShard"},
           {Json{{"prometheusURL", "http://p"}, {"targetSamplesPerShard", "many"}},
            "targetSamplesPerShard"},
       }) {
    std::string problem;
    EXPECT_FALSE(ingestionTarget(shardSetWith(ingestion), &problem).has_value());
    EXPECT_NE(problem.find(expected), std::string::npos) << problem;
  }
  std::string problem;
  EXPECT_FALSE(ingestionTarget(shardSetWith(nullptr), &problem).has_value());
  EXPECT_EQ(problem, "");
}

TEST(IngestionStatusTest, RatesInStatusShowTwoDecimalsAndTheTotalIsTheirSum) {
  const api::ShardSet ss = shardSetWith(validIngestion());
  ingestion::IngestionSnapshot snapshot = goodSnapshot();
  snapshot.per_shard = {{0, 381.516666666}, {1, 763.033333333}};
  snapshot.total_samples_per_second = 1144.549999999;
  std::vector<planner::Event> events;
  Json status = shardSetStatusJson(planFor(ss), ss, snapshot, std::nullopt, kNow, &events);
  const Json& ingestion = status["ingestion"];
  EXPECT_EQ(ingestion["perShard"][0]["samplesPerSecond"].dump(), "381.52");
  EXPECT_EQ(ingestion["perShard"][1]["samplesPerSecond"].dump(), "763.03");
  EXPECT_EQ(ingestion["totalSamplesPerSecond"].dump(), "1144.55");
}

TEST(IngestionStatusTest, StatusCarriesRatesRecommendationAndATrueCondition) {
  const api::ShardSet ss = shardSetWith(validIngestion());
  std::vector<planner::Event> events;
  Json status = shardSetStatusJson(planFor(ss), ss, goodSnapshot(), std::nullopt, kNow, &events);
  EXPECT_EQ(status["ingestion"]["totalSamplesPerSecond"], 1.2e6);
  EXPECT_EQ(status["ingestion"]["perShard"].size(), 3u);
  EXPECT_EQ(status["ingestion"]["perShard"][1]["index"], 1);
  EXPECT_EQ(status["ingestion"]["perShard"][1]["samplesPerSecond"], 5e5);
  EXPECT_EQ(status["ingestion"]["error"], "");
  EXPECT_EQ(status["recommendedShards"], 3);
  const Json* c = conditionIn(status, ingestion::kConditionIngestionAvailable);
  ASSERT_NE(c, nullptr) << status.dump();
  EXPECT_EQ((*c)["status"], "True");
  EXPECT_EQ((*c)["reason"], ingestion::kReasonRatesAvailable);
  EXPECT_EQ((*c)["observedGeneration"], 4);
  EXPECT_TRUE(events.empty());
}

TEST(IngestionStatusTest, FailedQueryReportsTheReasonWithoutARecommendation) {
  const api::ShardSet ss = shardSetWith(validIngestion());
  std::vector<planner::Event> events;
  Json status =
      shardSetStatusJson(planFor(ss), ss, failedSnapshot(ingestion::kReasonPrometheusUnreachable),
                         std::nullopt, kNow, &events);
  EXPECT_FALSE(status.contains("recommendedShards")) << status.dump();
  EXPECT_EQ(status["ingestion"]["error"], "transport: connection refused");
  EXPECT_EQ(status["ingestion"]["perShard"], Json::array());
  const Json* c = conditionIn(status, ingestion::kConditionIngestionAvailable);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "False");
  EXPECT_EQ((*c)["reason"], ingestion::kReasonPrometheusUnreachable);
  EXPECT_EQ((*c)["message"], "transport: connection refused");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, planner::EventType::Warning);
  EXPECT_EQ(events[0].reason, ingestion::kEventIngestionUnavailable);
  EXPECT_EQ(events[0].message, "PrometheusUnreachable: transport: connection refused");
}

TEST(IngestionStatusTest, NoSnapshotYetIsUnknown) {
  const api::ShardSet ss = shardSetWith(validIngestion());
  Json status = shardSetStatusJson(planFor(ss), ss, std::nullopt, std::nullopt, kNow);
  EXPECT_FALSE(status.contains("ingestion"));
  EXPECT_FALSE(status.contains("recommendedShards"));
  const Json* c = conditionIn(status, ingestion::kConditionIngestionAvailable);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "Unknown");
  EXPECT_EQ((*c)["reason"], ingestion::kReasonAwaitingFirstQuery);
}

TEST(IngestionStatusTest, WithoutSpecIngestionNothingIsPublishedEvenFromALeftoverSnapshot) {
  const api::ShardSet ss = shardSetWith(nullptr);
  Json status = shardSetStatusJson(planFor(ss), ss, goodSnapshot(), std::nullopt, kNow);
  EXPECT_FALSE(status.contains("ingestion"));
  EXPECT_FALSE(status.contains("recommendedShards"));
  EXPECT_EQ(conditionIn(status, ingestion::kConditionIngestionAvailable), nullptr);
}

TEST(IngestionStatusTest, AnUnusableSpecIsAFalseConditionAndNoRates) {
  const api::ShardSet ss = shardSetWith(Json{{"interval", "500ms"}});
  std::vector<planner::Event> events;
  Json status = shardSetStatusJson(planFor(ss), ss, goodSnapshot(), std::nullopt, kNow, &events);
  EXPECT_FALSE(status.contains("ingestion"));
  const Json* c = conditionIn(status, ingestion::kConditionIngestionAvailable);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "False");
  EXPECT_EQ((*c)["reason"], ingestion::kReasonInvalidIngestionSpec);
  EXPECT_EQ(events.size(), 1u);
}

Condition previous(std::string status, std::string reason, std::string at) {
  return Condition{.type = std::string(ingestion::kConditionIngestionAvailable),
                   .status = std::move(status),
                   .reason = std::move(reason),
                   .message = "before",
                   .last_transition_time = std::move(at),
                   .observed_generation = 3};
}

TEST(IngestionStatusTest, TransitionTimeMovesOnlyWhenTheStatusChanges) {
  const std::string earlier = "2026-03-01T09:00:00Z";
  const std::string now = "2026-03-01T10:00:00Z";
  std::vector<Condition> was_false = {previous("False", "QueryTimeout", earlier)};
  auto c = ingestion::ingestionCondition(
      was_false, true, "", failedSnapshot(ingestion::kReasonPrometheusUnreachable), 4, kNow);
  EXPECT_EQ(c->last_transition_time, earlier);
  c = ingestion::ingestionCondition(was_false, true, "", goodSnapshot(), 4, kNow);
  EXPECT_EQ(c->last_transition_time, now);
  c = ingestion::ingestionCondition(was_false, true, "", std::nullopt, 4, kNow);
  EXPECT_EQ(c->status, "Unknown");
  EXPECT_EQ(c->last_transition_time, now);
  std::vector<Condition> was_unknown = {previous("Unknown", "AwaitingFirstQuery", earlier)};
  c = ingestion::ingestionCondition(was_unknown, true, "", std::nullopt, 4, kNow);
  EXPECT_EQ(c->last_transition_time, earlier);
}

TEST(IngestionStatusTest, EventsOnlyOnTransitions) {
  const Condition f1 = previous("False", "QueryTimeout", "t");
  const Condition f2 = previous("False", "EmptyResult", "t");
  const Condition t = previous("True", "RatesAvailable", "t");
  const Condition u = previous("Unknown", "AwaitingFirstQuery", "t");

  EXPECT_EQ(ingestion::ingestionEvents(nullptr, f1).size(), 1u);
  EXPECT_EQ(ingestion::ingestionEvents(&t, f1).size(), 1u);
  EXPECT_EQ(ingestion::ingestionEvents(&u, f1).size(), 1u);
  EXPECT_TRUE(ingestion::ingestionEvents(&f1, f1).empty());  // still failing the same way
  auto changed = ingestion::ingestionEvents(&f1, f2);        // failing another way
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].message, "EmptyResult: before");

  auto recovered = ingestion::ingestionEvents(&f1, t);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].type, planner::EventType::Normal);
  EXPECT_EQ(recovered[0].reason, ingestion::kEventIngestionRecovered);
  EXPECT_TRUE(ingestion::ingestionEvents(nullptr, t).empty());
  EXPECT_TRUE(ingestion::ingestionEvents(&u, t).empty());
  EXPECT_TRUE(ingestion::ingestionEvents(&t, t).empty());
  EXPECT_TRUE(ingestion::ingestionEvents(&t, u).empty());
}

TEST(IngestionStatusTest, TheOtherConditionsAreKeptAndIngestionComesLast) {
  const api::ShardSet ss = shardSetWith(validIngestion());
  planner::Plan plan = planFor(ss);
  plan.status.conditions = {
      planner::makeCondition({}, planner::kConditionReady, true, "Ok", "", 4, kNow)};
  Json status = shardSetStatusJson(plan, ss, goodSnapshot(), std::nullopt, kNow);
  ASSERT_EQ(status["conditions"].size(), 2u);
  EXPECT_EQ(status["conditions"][0]["type"], "Ready");
  EXPECT_EQ(status["conditions"][1]["type"], ingestion::kConditionIngestionAvailable);
}

}  // namespace
}  // namespace shardscaler::controller
