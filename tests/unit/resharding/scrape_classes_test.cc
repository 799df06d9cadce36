// Where shardscaler's rules go in spec.scrapeClasses: a class of its own, the default unless the
// user has one (then also appended to it); every other class and rule kept as written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardscaler/resharding/low_churn_rules.h"
#include "shardscaler/resharding/scrape_classes.h"

namespace shardscaler::resharding {
namespace {

using Json = nlohmann::json;

Json rules() { return toRelabelings(makeRules(moduloTable(6, 2), {})); }

Json userClass(const std::string& name, bool is_default) {
  Json c{{"name", name},
         {"tlsConfig", {{"caFile", "/etc/ca.pem"}}},
         {"relabelings", Json::array({{{"targetLabel", "team"}, {"replacement", "a"}}})}};
  if (is_default) c["default"] = true;
  return c;
}

TEST(ScrapeClasses, WithoutAUserDefaultShardscalersClassIsTheDefault) {
  const Json classes = Json::array({userClass("tls", false)});
  const Json out = withRules(classes, rules(), std::nullopt);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], classes[0]);
  EXPECT_EQ(out[1]["name"], kScrapeClassName);
  EXPECT_EQ(out[1]["default"], true);
  EXPECT_EQ(out[1]["relabelings"], rules());
  EXPECT_EQ(ownRules(out), rules());
  EXPECT_TRUE(carriesOwnRules(out));
  EXPECT_FALSE(carriesOwnRules(classes));
  EXPECT_EQ(withRules(Json(), rules(), std::nullopt).size(), 1u);
}

TEST(ScrapeClasses, WithAUserDefaultTheRulesAreAppendedToIt) {
  const Json classes = Json::array({userClass("main", true)});
  const Json out = withRules(classes, rules(), std::string("main"));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["tlsConfig"], classes[0]["tlsConfig"]);
  EXPECT_EQ(out[0]["default"], true);
  const Json& relabelings = out[0]["relabelings"];
  ASSERT_EQ(relabelings.size(), 1 + rules().size());
  EXPECT_EQ(relabelings[0], classes[0]["relabelings"][0]) << "the user's rule comes first";
  EXPECT_FALSE(out[1].contains("default"));
  EXPECT_EQ(userDefaultClasses(out), std::vector<std::string>{"main"});
  // Writing them again changes nothing.
  EXPECT_EQ(withRules(out, rules(), std::string("main")), out);
}

TEST(ScrapeClasses, ANewUserDefaultTakesTheRulesAndShardscalersClassStepsBack) {
  Json classes = withRules(Json::array({userClass("main", false)}), rules(), std::nullopt);
  classes[0]["default"] = true;  // the user makes theirs the default: two defaults now
  EXPECT_EQ(userDefaultClasses(classes), std::vector<std::string>{"main"});
  const Json out = withRules(classes, rules(), std::string("main"));
  EXPECT_FALSE(out[1].contains("default"));
  EXPECT_EQ(ownRules(out), rules());
}

TEST(ScrapeClasses, RemovingTheRulesRestoresWhatTheUserWrote) {
  const Json classes = Json::array({userClass("main", true), userClass("tls", false)});
  const Json with = withRules(classes, rules(), std::string("main"));
  EXPECT_EQ(withoutRules(with, false), classes);
  Json kept = withoutRules(with, true);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[2], (Json{{"name", kScrapeClassName}}));
  EXPECT_TRUE(withoutRules(withRules(Json(), rules(), std::nullopt), false).is_null());
}

TEST(ScrapeClasses, AClassWithoutShardscalersRulesIsLeftByteForByte) {
  Json odd = userClass("odd", false);
  odd["relabelings"] = Json::array();
  const Json out = withRules(Json::array({odd}), rules(), std::nullopt);
  EXPECT_EQ(out[0], odd);
}

}  // namespace
}  // namespace shardscaler::resharding
