#include "shardscaler/planner/policy.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace shardscaler::planner {
namespace {

using namespace std::chrono;
using testing::Json;

RetentionPolicy resolve(const Json& shard_set_spec, const Json& target_spec) {
  auto ss = api::decodeShardSet(testing::shardSetJson(3, shard_set_spec));
  auto t = parseTarget(testing::targetJson(5, target_spec), TargetKind::Prometheus);
  EXPECT_TRUE(ss && t);
  auto p = resolveRetentionPolicy(*ss, *t);
  if (!p) {
    ADD_FAILURE() << p.error().front().describe();
    return {};
  }
  return *p;
}

Json merged(Json a, const Json& b) {
  a.update(b);
  return a;
}

std::vector<api::FieldError> errors(const Json& shard_set_spec, const Json& target_spec) {
  auto ss = api::decodeShardSet(testing::shardSetJson(3, shard_set_spec));
  auto t = parseTarget(testing::targetJson(5, target_spec), TargetKind::Prometheus);
  EXPECT_TRUE(ss && t);
  auto p = resolveRetentionPolicy(*ss, *t);
  return p ? std::vector<api::FieldError>{} : p.error();
}

TEST(RetentionPolicy, DefaultsToDelete) {
  auto p = resolve({}, {});
  EXPECT_EQ(p.when_scaled, WhenScaled::Delete);
  EXPECT_EQ(p.when_scaled_source, "default");
  EXPECT_FALSE(p.period.has_value());
}

TEST(RetentionPolicy, ShardSetWinsOverTarget) {
  auto p = resolve(testing::retainPolicy("Retain", "3d"), testing::retainPolicy("Delete", "1d"));
  EXPECT_EQ(p.when_scaled, WhenScaled::Retain);
  EXPECT_EQ(p.when_scaled_source, "ShardSet");
  EXPECT_EQ(p.period, hours(72));
  EXPECT_EQ(p.period_source, "spec.shardRetentionPolicy.retain.retentionPeriod");
}

// The operator's own retention (on by default since v0.92) keeps what its Prometheus says to keep:
// a ShardSet that says less never deletes those shards.
TEST(RetentionPolicy, TheTargetsRetainWinsOverTheShardSetsDelete) {
  auto p = resolve(testing::retainPolicy("Delete"), testing::retainPolicy("Retain", "2h"));
  EXPECT_EQ(p.when_scaled, WhenScaled::Retain);
  EXPECT_EQ(p.when_scaled_source, "target (it keeps what the ShardSet's Delete would not)");
  EXPECT_EQ(p.period, hours(2));
  EXPECT_EQ(p.period_source, "target.spec.shardRetentionPolicy.retain.retentionPeriod");
}

TEST(RetentionPolicy, TheLongerPeriodWinsWhenBothRetain) {
  auto shorter =
      resolve(testing::retainPolicy("Retain", "1h"), testing::retainPolicy("Retain", "6h"));
  EXPECT_EQ(shorter.period, hours(6));
  EXPECT_EQ(shorter.period_source,
            "target.spec.shardRetentionPolicy.retain.retentionPeriod (longer than "
            "spec.shardRetentionPolicy.retain.retentionPeriod)");
  auto longer =
      resolve(testing::retainPolicy("Retain", "3d"), testing::retainPolicy("Retain", "6h"));
  EXPECT_EQ(longer.period, hours(72));
  EXPECT_EQ(longer.period_source, "spec.shardRetentionPolicy.retain.retentionPeriod");
  // The target keeps for ever (a period of 0, or size-only retention): so does the ShardSet.
  EXPECT_FALSE(resolve(testing::retainPolicy("Retain", "1h"), testing::retainPolicy("Retain", "0"))
                   .period.has_value());
  EXPECT_FALSE(resolve(testing::retainPolicy("Retain", "1h"),
                       merged({{"retentionSize", "50GB"}},
                              {{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}}))
                   .period.has_value());
  // A target that does not retain imposes no period of its own.
  EXPECT_EQ(resolve(testing::retainPolicy("Retain", "1h"), {{"retention", "15d"}}).period,
            hours(1));
}

TEST(RetentionPolicy, FallsBackToTheTargetsPolicyAndPeriod) {
  auto p = resolve({}, testing::retainPolicy("Retain", "2w"));
  EXPECT_EQ(p.when_scaled, WhenScaled::Retain);
  EXPECT_EQ(p.when_scaled_source, "target");
  EXPECT_EQ(p.period, hours(24 * 14));
  EXPECT_EQ(p.period_source, "target.spec.shardRetentionPolicy.retain.retentionPeriod");
  // ShardSet says Retain without a period: the target's retain period still applies.
  Json ss{{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}};
  EXPECT_EQ(resolve(ss, testing::retainPolicy("Delete", "5h")).period, hours(5));
}

TEST(RetentionPolicy, PeriodFromTargetRetentionThenDefault) {
  Json retain{{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}};
  EXPECT_EQ(resolve(retain, {{"retention", "15d"}}).period, hours(24 * 15));
  EXPECT_EQ(resolve(retain, {{"retention", "15d"}}).period_source, "target.spec.retention");
  EXPECT_EQ(resolve(retain, {}).period, hours(24));
  EXPECT_EQ(resolve(retain, {}).period_source, "default");
  EXPECT_EQ(resolve(retain, {{"retention", ""}}).period, hours(24));  // "" is unset
  // Both time and size: time wins.
  EXPECT_EQ(resolve(retain, {{"retention", "2d"}, {"retentionSize", "10GB"}}).period, hours(48));
}

TEST(RetentionPolicy, SizeOnlyRetentionMeansNever) {
  Json retain{{"shardRetentionPolicy", {{"whenScaled", "Retain"}}}};
  auto p = resolve(retain, {{"retentionSize", "50GB"}});
  EXPECT_FALSE(p.period.has_value());
  EXPECT_EQ(p.period_source, "size-only retention");
  // An explicit retain period beats size-only retention, as in the operator.
  EXPECT_EQ(
      resolve(retain, merged({{"retentionSize", "50GB"}}, testing::retainPolicy("Retain", "1d")))
          .period,
      hours(24));
}

TEST(RetentionPolicy, ZeroPeriodMeansNever) {
  EXPECT_FALSE(resolve(testing::retainPolicy("Retain", "0"), {}).period.has_value());
  EXPECT_FALSE(resolve(testing::retainPolicy("Retain", "0s"), {}).period.has_value());
}

TEST(RetentionPolicy, EmptyTargetRetainPeriodMeansUnset) {
  auto p = resolve({}, {{"retention", "15d"},
                        {"shardRetentionPolicy",
                         {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", ""}}}}}});
  EXPECT_EQ(p.when_scaled, WhenScaled::Retain);
  EXPECT_EQ(p.period, hours(24 * 15));
  EXPECT_EQ(p.period_source, "target.spec.retention");
}

TEST(RetentionPolicy, BadFieldsAreNamed) {
  auto e = errors(testing::retainPolicy("Keep", "3x"), {});
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].describe(),
            "spec.shardRetentionPolicy.whenScaled: must be Retain or Delete, got \"Keep\"");
  EXPECT_EQ(
      e[1].describe(),
      "spec.shardRetentionPolicy.retain.retentionPeriod: unknown unit \"x\" in duration \"3x\"");
  // The target's bad fields count only when used.
  EXPECT_TRUE(errors(testing::retainPolicy("Delete"), {{"retention", "forever"}}).empty());
  auto used = errors(testing::retainPolicy("Retain"), {{"retention", "forever"}});
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].field, "target.spec.retention");
  // retain.retentionPeriod: "" on the target means unset, as on the ShardSet: no error, and the
  // period comes from the next source.
  EXPECT_TRUE(errors({}, {{"shardRetentionPolicy",
                           {{"whenScaled", "Retain"}, {"retain", {{"retentionPeriod", ""}}}}}})
                  .empty());
}

}  // namespace
}  // namespace shardscaler::planner
