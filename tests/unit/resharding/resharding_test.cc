// resharding::planResharding: what spec.resharding writes into the target's scrape classes and
// says in the Resharding condition, for each case the operator's source makes special
// (docs/design/resharding.md): ScrapeConfigs (no operator sharding after a hashmod), Probes, a
// user's default class, topology sharding, additionalScrapeConfigs, users' own __tmp_hash rules.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardscaler/resharding/hashmod.h"
#include "shardscaler/resharding/resharding.h"
#include "shardscaler/resharding/scrape_classes.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

ScrapeObject staticScrapeConfig(const std::string& name, int targets) {
  Json sc{{"metadata", {{"namespace", "monitoring"}, {"name", name}}},
          {"spec", {{"staticConfigs", Json::array({{{"targets", Json::array()}}})}}}};
  for (int i = 0; i < targets; ++i) {
    sc["spec"]["staticConfigs"][0]["targets"].push_back("127.0." + std::to_string(i / 250) + "." +
                                                        std::to_string(i % 250 + 1) + ":9");
  }
  return readScrapeObject(ScrapeKind::ScrapeConfig, sc);
}

ReshardingInput lowChurn(int32_t shards, std::vector<ScrapeObject> objects) {
  ReshardingInput in;
  in.mode = Mode::LowChurn;
  in.current_shards = shards;
  in.shards = shards;
  in.objects = std::move(objects);
  return in;
}

TEST(Resharding, OperatorModeWithNothingOfOursWritesNothing) {
  ReshardingInput in;
  const auto out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_FALSE(out.relevant);
  EXPECT_EQ(out.reason, kReasonOperatorSharding);
}

TEST(Resharding, TurningItOnWritesADefaultClassThatMovesNothingForADivisorCount) {
  const auto out = planResharding(lowChurn(4, {staticScrapeConfig("static", 100)}));
  ASSERT_TRUE(out.scrape_classes);
  ASSERT_TRUE(out.rules);
  EXPECT_EQ(out.rules->table, moduloTable(bucketCount(50), 4));
  EXPECT_TRUE(out.condition);
  EXPECT_EQ(out.reason, kReasonLowChurn);
  EXPECT_NE(out.message.find("covered (1): ScrapeConfig monitoring/static"), std::string::npos)
      << out.message;
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].reason, kEventLowChurnEnabled);
  EXPECT_NE(out.events[0].message.find("switching moved none"), std::string::npos);
  // Once written, the same input is at rest.
  ReshardingInput again = lowChurn(4, {staticScrapeConfig("static", 100)});
  again.target.scrape_classes = *out.scrape_classes;
  const auto rest = planResharding(again);
  EXPECT_FALSE(rest.scrape_classes);
  EXPECT_TRUE(rest.events.empty());
}

TEST(Resharding, AScaleWritesTheNextTableFromTheOneInForce) {
  ReshardingInput in = lowChurn(4, {staticScrapeConfig("static", 500)});
  in.target.scrape_classes = *planResharding(in).scrape_classes;
  in.shards = 5;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.rules);
  const BucketTable before = moduloTable(bucketCount(50), 4);
  int moved = 0;
  for (int32_t b = 0; b < before.buckets(); ++b) {
    const auto i = static_cast<size_t>(b);
    if (out.rules->table.shard_of_bucket[i] == before.shard_of_bucket[i]) continue;
    EXPECT_EQ(out.rules->table.shard_of_bucket[i], 4);
    ++moved;
  }
  EXPECT_GT(moved, 0);
  EXPECT_TRUE(out.events.empty()) << "a scale is no switch";
}

TEST(Resharding, OperatorModeRemovesTheRulesOnceWithAnEvent) {
  ReshardingInput in = lowChurn(3, {staticScrapeConfig("static", 10)});
  in.target.scrape_classes = *planResharding(in).scrape_classes;
  in.mode = Mode::Operator;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.scrape_classes);
  EXPECT_TRUE(out.scrape_classes->is_null());
  EXPECT_FALSE(out.condition);
  EXPECT_TRUE(out.relevant);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].reason, kEventLowChurnDisabled);
  EXPECT_NE(out.events[0].message.find("move to another shard once"), std::string::npos);
}

TEST(Resharding, AClassThatObjectsNameStaysEmptyWhenTurnedOff) {
  ScrapeObject named = staticScrapeConfig("named", 3);
  named.scrape_class = std::string(kScrapeClassName);
  ReshardingInput in = lowChurn(2, {named});
  in.target.scrape_classes = *planResharding(in).scrape_classes;
  in.mode = Mode::Operator;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.scrape_classes);
  EXPECT_EQ(*out.scrape_classes, Json::array({{{"name", kScrapeClassName}}}));
}

TEST(Resharding, ScrapeConfigsThatShardThemselvesAreLeftToTheirRules) {
  Json own{{"metadata", {{"namespace", "ns"}, {"name", "own"}}},
           {"spec",
            {{"relabelings", Json::array({{{"sourceLabels", {"__address__"}},
                                           {"targetLabel", "__tmp_mine"},
                                           {"modulus", 4},
                                           {"action", "HashMod"}}})}}}};
  const auto out = planResharding(lowChurn(
      2, {staticScrapeConfig("static", 5), readScrapeObject(ScrapeKind::ScrapeConfig, own)}));
  ASSERT_TRUE(out.rules);
  EXPECT_EQ(out.rules->own_sharding_jobs, std::vector<std::string>{"scrapeConfig/ns/own"});
  EXPECT_NE(out.message.find("ScrapeConfig ns/own: shards itself"), std::string::npos)
      << out.message;
}

TEST(Resharding, AScrapeConfigWithItsOwnHashKeyIsRefusedWithTheWayOut) {
  Json keyed{{"metadata", {{"namespace", "ns"}, {"name", "keyed"}}},
             {"spec",
              {{"relabelings",
                Json::array({{{"sourceLabels", {"team"}}, {"targetLabel", "__tmp_hash"}}})}}}};
  ReshardingInput in = lowChurn(2, {readScrapeObject(ScrapeKind::ScrapeConfig, keyed)});
  const auto out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_FALSE(out.condition);
  EXPECT_EQ(out.reason, kReasonOwnShardingRules);
  EXPECT_NE(out.message.find("spec.scrapeClass"), std::string::npos) << out.message;
  // Named into a class of its own, it no longer stands in the way.
  Json moved = keyed;
  moved["spec"]["scrapeClass"] = "plain";
  in.target.scrape_classes = Json::array({{{"name", "plain"}}});
  in.objects = {readScrapeObject(ScrapeKind::ScrapeConfig, moved)};
  const auto after = planResharding(in);
  EXPECT_TRUE(after.condition);
  EXPECT_NE(after.message.find("scrape class \"plain\", the operator's sharding"),
            std::string::npos)
      << after.message;
}

TEST(Resharding, MonitorsWithTheirOwnShardingLabelsKeepThemAndAreNotCovered) {
  Json sm{{"metadata", {{"namespace", "ns"}, {"name", "everywhere"}}},
          {"spec",
           {{"endpoints",
             Json::array({{{"relabelings", Json::array({{{"targetLabel", "__tmp_disable_sharding"},
                                                         {"replacement", "true"}}})}}})}}}};
  const auto out = planResharding(lowChurn(2, {readScrapeObject(ScrapeKind::ServiceMonitor, sm)}));
  EXPECT_TRUE(out.condition);
  EXPECT_NE(out.message.find("ServiceMonitor ns/everywhere: sets __tmp_disable_sharding"),
            std::string::npos)
      << out.message;
}

TEST(Resharding, AUserDefaultClassGetsTheRulesAppended) {
  ReshardingInput in = lowChurn(2, {staticScrapeConfig("static", 5)});
  in.target.scrape_classes = Json::array({{{"name", "main"}, {"default", true}}});
  const auto out = planResharding(in);
  ASSERT_TRUE(out.scrape_classes);
  EXPECT_EQ(userDefaultClasses(*out.scrape_classes), std::vector<std::string>{"main"});
  EXPECT_EQ((*out.scrape_classes)[0]["relabelings"], ownRules(*out.scrape_classes));
  EXPECT_NE(out.message.find("and the default scrape class \"main\""), std::string::npos);
}

TEST(Resharding, TwoUserDefaultsAreLeftAloneAndSaid) {
  ReshardingInput in = lowChurn(2, {});
  in.target.scrape_classes =
      Json::array({{{"name", "a"}, {"default", true}}, {{"name", "b"}, {"default", true}}});
  const auto out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_EQ(out.reason, kReasonMultipleDefaultClasses);
}

TEST(Resharding, TopologyShardingIsRefused) {
  ReshardingInput in = lowChurn(2, {});
  in.target.topology = true;
  const auto out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_EQ(out.reason, kReasonTopologySharding);
}

TEST(Resharding, AdditionalScrapeConfigsAreSaidNotToBeCovered) {
  ReshardingInput in = lowChurn(2, {});
  in.target.additional_scrape_configs = true;
  const auto out = planResharding(in);
  EXPECT_NE(out.message.find("spec.additionalScrapeConfigs: no scrape class"), std::string::npos);
}

TEST(Resharding, WithoutTheObjectsItNeitherEnablesNorForgetsWhatItSaid) {
  ReshardingInput in = lowChurn(3, {});
  in.objects.reset();
  in.objects_error = "scrapeconfigs: Forbidden";
  auto out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_TRUE(out.needs_objects);
  EXPECT_EQ(out.reason, kReasonScrapeObjectsUnread);
  EXPECT_NE(out.message.find("Forbidden"), std::string::npos);

  ReshardingInput live = lowChurn(3, {staticScrapeConfig("static", 5)});
  const auto written = planResharding(live);
  in.target.scrape_classes = *written.scrape_classes;
  in.previous_reason = written.reason;
  in.previous_message = written.message;
  out = planResharding(in);
  EXPECT_FALSE(out.scrape_classes);
  EXPECT_FALSE(out.needs_objects);
  EXPECT_EQ(out.message, written.message);
}

TEST(Resharding, UnreadableRulesAreReplacedWithAWarning) {
  ReshardingInput in = lowChurn(2, {staticScrapeConfig("static", 5)});
  Json classes = *planResharding(in).scrape_classes;
  for (Json& rule : classes[0]["relabelings"]) {
    if (rule.value("targetLabel", "") == "__tmp_shardscaler_bucket") rule.erase("modulus");
  }
  in.target.scrape_classes = classes;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.scrape_classes);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_TRUE(out.events[0].warning);
  EXPECT_EQ(out.events[0].reason, kEventLowChurnRulesReset);
}

TEST(Resharding, StaticTargetsAreBalancedExactly) {
  ReshardingInput in = lowChurn(1, {staticScrapeConfig("static", 1000)});
  in.target.scrape_classes = *planResharding(in).scrape_classes;
  in.shards = 7;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.rules);
  std::vector<int> load(7, 0);
  for (const auto& key : staticScrapeConfig("static", 1000).static_keys) {
    ++load[static_cast<size_t>(out.rules->table.shard_of_bucket[hashmod(
        key, static_cast<uint64_t>(out.rules->table.buckets()))])];
  }
  for (int l : load) EXPECT_NEAR(l, 1000.0 / 7, 3) << ::testing::PrintToString(load);
}

TEST(Resharding, ReleaseRestoresTheOperatorsSharding) {
  ReshardingInput in = lowChurn(2, {staticScrapeConfig("static", 5)});
  in.target.scrape_classes = *planResharding(in).scrape_classes;
  in.release = true;
  const auto out = planResharding(in);
  ASSERT_TRUE(out.scrape_classes);
  EXPECT_TRUE(out.scrape_classes->is_null());
}

}  // namespace
}  // namespace shardscaler::resharding
