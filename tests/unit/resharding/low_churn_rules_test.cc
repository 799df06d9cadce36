// shardscaler's relabelings: their shape (every rule names a __tmp_shardscaler_ label), the round
// trip through a target (parseRules reads back what toRelabelings wrote, for any table and job
// names), and what makes a list of rules unreadable.
#include <gtest/gtest.h>

#include <rapidcheck.h>
#include <nlohmann/json.hpp>

#include "resharding_property.h"
#include "shardscaler/resharding/low_churn_rules.h"
#include "shardscaler/resharding/shard_value.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;
using testing::checkProperty;
using testing::uniform;

TEST(LowChurnRules, EveryRuleIsRecognisablyShardscalers) {
  const LowChurnRules rules = makeRules(moduloTable(12, 3), {"scrapeConfig/ns/own"});
  const Json relabelings = toRelabelings(rules);
  ASSERT_TRUE(relabelings.is_array());
  for (const Json& rule : relabelings) EXPECT_TRUE(isOwnRule(rule)) << rule.dump();
  EXPECT_FALSE(isOwnRule(Json{{"sourceLabels", {"__address__"}}, {"targetLabel", "__tmp_hash"}}));
  EXPECT_FALSE(isOwnRule(Json{{"action", "keep"}, {"sourceLabels", {"job"}}}));
}

TEST(LowChurnRules, SendEachBucketToItsShardsValue) {
  const LowChurnRules rules = makeRules(moduloTable(6, 3), {});
  const Json relabelings = toRelabelings(rules);
  std::vector<std::string> lists;
  for (const Json& rule : relabelings) {
    if (rule.value("targetLabel", "") == "__tmp_hash") {
      EXPECT_EQ(rule["sourceLabels"], Json::array({"__tmp_shardscaler_bucket"}));
      lists.push_back(rule["regex"].get<std::string>() + " -> " +
                      rule["replacement"].get<std::string>());
      const std::string value = rule["replacement"];
      EXPECT_TRUE(isShardValue(value, std::stoi(value.substr(0, value.find('-'))), 3)) << value;
    }
  }
  EXPECT_EQ(lists,
            (std::vector<std::string>{"0|3 -> " + shardValue(0, 3), "1|4 -> " + shardValue(1, 3),
                                      "2|5 -> " + shardValue(2, 3)}));
  const Json& keep = relabelings.back();
  EXPECT_EQ(keep["action"], "keep");
  EXPECT_NE(keep["regex"].get<std::string>().find("$(SHARD)"), std::string::npos);
}

TEST(LowChurnRules, ReadBackWhatTheyWrite) {
  checkProperty(300, [] {
    const int32_t buckets = uniform(1, 400);
    BucketTable table = moduloTable(buckets, uniform(1, std::min(buckets, 30)));
    std::vector<double> w(static_cast<size_t>(buckets), 1.0);
    table = rescale(table, uniform(1, std::min(buckets, 30)), w);
    std::vector<std::string> jobs;
    for (int i = uniform(0, 3); i > 0; --i) {
      jobs.push_back(*rc::gen::element<std::string>("scrapeConfig/a/b", "scrapeConfig/x.y/z|w",
                                                    "scrapeConfig/n/(a)[b]{c}^$*+?\\"));
    }
    const LowChurnRules rules = makeRules(table, jobs);
    const auto parsed = parseRules(toRelabelings(rules));
    RC_ASSERT(parsed.has_value());
    RC_ASSERT(*parsed == rules);
  });
}

TEST(LowChurnRules, KeepTheValuesTheyHadWhileStillRight) {
  const LowChurnRules first = makeRules(moduloTable(12, 3), {});
  std::vector<std::string> values = first.shard_values;
  values[1] = "1-not-a-value";
  const LowChurnRules again = makeRules(moduloTable(12, 3), {}, values);
  EXPECT_EQ(again.shard_values[0], first.shard_values[0]);
  EXPECT_EQ(again.shard_values[1], shardValue(1, 3));
}

TEST(LowChurnRules, AreUnreadableWhenTheyDoNotMakeATable) {
  const Json good = toRelabelings(makeRules(moduloTable(6, 2), {}));
  EXPECT_FALSE(parseRules(Json::array()).has_value());
  EXPECT_FALSE(parseRules(Json::object()).has_value());
  auto without = [&](const std::string& target, const std::string& regex = "") {
    Json out = Json::array();
    bool dropped = false;
    for (const Json& r : good) {
      if (!dropped && r.value("targetLabel", "") == target &&
          (regex.empty() || r.value("regex", "") == regex)) {
        dropped = true;
        continue;
      }
      out.push_back(r);
    }
    return out;
  };
  EXPECT_FALSE(parseRules(without("__tmp_shardscaler_bucket")).has_value());
  EXPECT_FALSE(parseRules(without("__tmp_shardscaler_shards")).has_value());
  const auto missing = parseRules(without("__tmp_hash", "1|3|5"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().find("on no shard"), std::string::npos) << missing.error();
  Json twice = good;
  for (Json& r : twice) {
    if (r.value("regex", "") == "1|3|5") r["regex"] = "1|3|5|0";
  }
  EXPECT_FALSE(parseRules(twice).has_value());
}

TEST(QuoteRegex, EscapesEveryRe2MetaCharacter) {
  EXPECT_EQ(quoteRegex("scrapeConfig/a.b/c"), "scrapeConfig/a\\.b/c");
  EXPECT_EQ(quoteRegex("(x)|[y]{z}^$*+?\\"), "\\(x\\)\\|\\[y\\]\\{z\\}\\^\\$\\*\\+\\?\\\\");
}

}  // namespace
}  // namespace shardscaler::resharding
