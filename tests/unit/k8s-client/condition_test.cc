// k8s_meta's metav1.Condition: its codec and the status-condition helpers (apimachinery's
// meta.SetStatusCondition and friends).
#include "shardscaler/k8s_meta/condition.h"

#include <gtest/gtest.h>

namespace shardscaler::k8s {
namespace {

Condition cond(std::string type, std::string_view status, std::string reason,
               std::string at = "2026-11-24T10:00:00Z", int64_t generation = 1) {
  return {.type = std::move(type),
          .status = std::string(status),
          .reason = std::move(reason),
          .message = "m",
          .last_transition_time = std::move(at),
          .observed_generation = generation};
}

TEST(Condition, RoundTripsThroughJson) {
  const Condition c = cond("Ready", kConditionTrue, "ShardsReady");
  const nlohmann::json j = toJson(c);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"type": "Ready", "status": "True",
      "reason": "ShardsReady", "message": "m", "lastTransitionTime": "2026-11-24T10:00:00Z",
      "observedGeneration": 1})"));
  EXPECT_EQ(conditionFromJson(j), c);
}

TEST(Condition, ReadsWhatItCanAndSkipsEntriesWithoutAType) {
  EXPECT_FALSE(conditionFromJson(nlohmann::json::parse(R"({"status": "True"})")).has_value());
  EXPECT_FALSE(conditionFromJson(nlohmann::json("Ready")).has_value());
  auto partial = conditionFromJson(nlohmann::json::parse(R"({"type": "Ready", "status": 3})"));
  ASSERT_TRUE(partial.has_value());
  EXPECT_EQ(partial->status, "");
  EXPECT_EQ(partial->observed_generation, 0);
  const auto list = conditionsFromJson(nlohmann::json::parse(
      R"([{"type": "A", "status": "True"}, 7, {"status": "False"}, {"type": "B"}])"));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].type, "A");
  EXPECT_EQ(list[1].type, "B");
  EXPECT_TRUE(conditionsFromJson(nlohmann::json()).empty());
  EXPECT_TRUE(conditionsFromJson(nlohmann::json::object()).empty());
}

TEST(Condition, FindsAndTellsTrueFromFalse) {
  const std::vector<Condition> list = {cond("Ready", kConditionTrue, "R"),
                                       cond("Degraded", kConditionFalse, "D"),
                                       cond("Progressing", kConditionUnknown, "P")};
  ASSERT_NE(findStatusCondition(list, "Degraded"), nullptr);
  EXPECT_EQ(findStatusCondition(list, "Degraded")->reason, "D");
  EXPECT_EQ(findStatusCondition(list, "Missing"), nullptr);
  EXPECT_TRUE(isStatusConditionTrue(list, "Ready"));
  EXPECT_FALSE(isStatusConditionFalse(list, "Ready"));
  EXPECT_TRUE(isStatusConditionFalse(list, "Degraded"));
  EXPECT_FALSE(isStatusConditionTrue(list, "Progressing"));
  EXPECT_FALSE(isStatusConditionFalse(list, "Progressing"));
  EXPECT_FALSE(isStatusConditionTrue(list, "Missing"));
  EXPECT_FALSE(isStatusConditionFalse(list, "Missing"));
}

TEST(Condition, SetAddsANewConditionWithTheGivenTime) {
  std::vector<Condition> list;
  EXPECT_TRUE(setStatusCondition(list, cond("Ready", kConditionTrue, "R", "2026-11-24T10:00:00Z")));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].last_transition_time, "2026-11-24T10:00:00Z");
}

TEST(Condition, SetKeepsTheTransitionTimeWhileTheStatusStays) {
  std::vector<Condition> list = {cond("Ready", kConditionTrue, "R", "2026-11-24T10:00:00Z")};
  // Same status, new reason and generation: updated in place, the transition time kept.
  EXPECT_TRUE(
      setStatusCondition(list, cond("Ready", kConditionTrue, "R2", "2026-11-24T11:00:00Z", 2)));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].reason, "R2");
  EXPECT_EQ(list[0].observed_generation, 2);
  EXPECT_EQ(list[0].last_transition_time, "2026-11-24T10:00:00Z");
  // Nothing new: no change.
  EXPECT_FALSE(
      setStatusCondition(list, cond("Ready", kConditionTrue, "R2", "2026-11-24T12:00:00Z", 2)));
  EXPECT_EQ(list[0].last_transition_time, "2026-11-24T10:00:00Z");
  // The status changes: the new time is recorded.
  EXPECT_TRUE(
      setStatusCondition(list, cond("Ready", kConditionFalse, "R2", "2026-11-24T13:00:00Z", 2)));
  EXPECT_EQ(list[0].status, kConditionFalse);
  EXPECT_EQ(list[0].last_transition_time, "2026-11-24T13:00:00Z");
}

TEST(Condition, SetGivesATimeToAConditionThatHadNone) {
  std::vector<Condition> list = {cond("Ready", kConditionTrue, "R", "")};
  EXPECT_TRUE(setStatusCondition(list, cond("Ready", kConditionTrue, "R", "2026-11-24T10:00:00Z")));
  EXPECT_EQ(list[0].last_transition_time, "2026-11-24T10:00:00Z");
}

TEST(Condition, SetLeavesTheOtherTypesAlone) {
  std::vector<Condition> list = {cond("Ready", kConditionTrue, "R"),
                                 cond("Degraded", kConditionFalse, "D")};
  EXPECT_TRUE(setStatusCondition(list, cond("Progressing", kConditionTrue, "P")));
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].type, "Ready");
  EXPECT_EQ(list[1].type, "Degraded");
  EXPECT_EQ(list[2].type, "Progressing");
}

TEST(Condition, RemoveDropsOnlyThatType) {
  std::vector<Condition> list = {cond("Ready", kConditionTrue, "R"),
                                 cond("Degraded", kConditionFalse, "D")};
  EXPECT_TRUE(removeStatusCondition(list, "Ready"));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].type, "Degraded");
  EXPECT_FALSE(removeStatusCondition(list, "Ready"));
}

}  // namespace
}  // namespace shardscaler::k8s
