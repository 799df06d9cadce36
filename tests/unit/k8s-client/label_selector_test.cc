// Label selectors from labels.Parse strings and from metav1.LabelSelector objects, and matching.
#include "shardscaler/k8s_client/label_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace shardscaler::k8s {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(LabelSelector, ParsesAndMatchesTheSetBasedForms) {
  auto all = LabelSelector::parse("");
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->empty());
  EXPECT_TRUE(all->matches({{"shardset", "x"}}));

  auto eq = LabelSelector::parse("shardset=main");
  EXPECT_TRUE(eq->matches({{"shardset", "main"}}));
  EXPECT_FALSE(eq->matches({{"shardset", "other"}}));
  EXPECT_FALSE(eq->matches({}));
  EXPECT_EQ(LabelSelector::parse("shardset==main")->pinnedValue("shardset"), "main");
  EXPECT_EQ(LabelSelector::parse("shardset in (main)")->pinnedValue("shardset"), "main");
  EXPECT_EQ(LabelSelector::parse("shardset in (a,b)")->pinnedValue("shardset"), std::nullopt);

  auto in = LabelSelector::parse("shardset in (a, b)");
  ASSERT_TRUE(in.has_value()) << in.error();
  EXPECT_TRUE(in->matches({{"shardset", "b"}}));
  EXPECT_FALSE(in->matches({{"shardset", "c"}}));
  auto notin = LabelSelector::parse("shardset notin (a,b)");
  EXPECT_TRUE(notin->matches({{"shardset", "c"}}));
  EXPECT_TRUE(notin->matches({}));
  auto ne = LabelSelector::parse("shardset!=a");
  EXPECT_FALSE(ne->matches({{"shardset", "a"}}));
  EXPECT_TRUE(LabelSelector::parse("shardset")->matches({{"shardset", "a"}}));
  EXPECT_FALSE(LabelSelector::parse("!shardset")->matches({{"shardset", "a"}}));
  auto both = LabelSelector::parse("shardset,shardset!=b");
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->requirements().size(), 2);
}

TEST(LabelSelector, ErrorsNameTheProblem) {
  auto open = LabelSelector::parse("a in (b");
  ASSERT_FALSE(open.has_value());
  EXPECT_THAT(open.error(), HasSubstr("a in (b"));
  EXPECT_FALSE(LabelSelector::parse("a in (b c)").has_value());
  EXPECT_FALSE(LabelSelector::parse("a gt 3").has_value());
  EXPECT_FALSE(LabelSelector::parse("=b").has_value());
  EXPECT_FALSE(LabelSelector::parse("a=b,").has_value());
}

TEST(LabelSelector, ParseChecksKeysAndValuesAsTheApiServerDoes) {
  auto qualified = LabelSelector::parse("app.kubernetes.io/name in (prometheus, Agent_1)");
  ASSERT_TRUE(qualified.has_value()) << qualified.error();
  EXPECT_EQ(qualified->requirements().front(),
            (SelectorRequirement{
                "app.kubernetes.io/name", SelectorOperator::In, {"Agent_1", "prometheus"}}));
  EXPECT_TRUE(LabelSelector::parse("a=")->matches({{"a", ""}}));
  auto bad_prefix = LabelSelector::parse("Upper.IO/name=x");
  ASSERT_FALSE(bad_prefix.has_value());
  EXPECT_THAT(bad_prefix.error(), HasSubstr("\"Upper.IO/name\" is not a valid label key"));
  auto bad_value = LabelSelector::parse("a=b/c");
  ASSERT_FALSE(bad_value.has_value());
  EXPECT_THAT(bad_value.error(), HasSubstr("\"b/c\" is not a valid value for \"a\""));
  EXPECT_FALSE(LabelSelector::parse("a=" + std::string(64, 'v')).has_value());
  EXPECT_EQ(LabelSelector::parse("a in (b,a,b)")->requirements().front().values,
            (std::vector<std::string>{"a", "b"}));
}

TEST(LabelSelector, FromObjectReadsMatchLabelsAndMatchExpressions) {
  for (const Json& everything : {Json(), Json::object(), Json::parse(R"({"matchLabels":null})"),
                                 Json::parse(R"({"matchLabels":{},"matchExpressions":[]})")}) {
    auto s = LabelSelector::fromObject(everything);
    ASSERT_TRUE(s.has_value()) << everything.dump();
    EXPECT_TRUE(s->empty()) << everything.dump();
    EXPECT_TRUE(s->matches({})) << everything.dump();
  }
  auto s = LabelSelector::fromObject(Json::parse(R"({
    "matchLabels": {"guard": "on"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                         {"key": "skip", "operator": "DoesNotExist"},
                         {"key": "zone", "operator": "NotIn", "values": ["c"]},
                         {"key": "team", "operator": "Exists"}]})"));
  ASSERT_TRUE(s.has_value()) << s.error();
  EXPECT_EQ(s->requirements().size(), 5u);
  EXPECT_EQ(s->text(), "");
  const Labels match{{"guard", "on"}, {"tier", "b"}, {"team", "x"}};
  EXPECT_TRUE(s->matches(match));
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"guard", "off"}, {"tier", "c"}, {"skip", ""}, {"zone", "c"}}) {
    Labels changed = match;
    changed[key] = value;
    EXPECT_FALSE(s->matches(changed)) << key << "=" << value;
  }
  Labels no_team = match;
  no_team.erase("team");
  EXPECT_FALSE(s->matches(no_team));
}

TEST(LabelSelector, ParseReadsEmptySetMembersAsTheEmptyValue) {
  // apimachinery's parser: "()" is {""}, and "(a,)" / "(,a)" / "(a,,b)" add "".
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {"x in ()", {""}},
      {"x in (a,)", {"", "a"}},
      {"x in (,a)", {"", "a"}},
      {"x notin (a,,b)", {"", "a", "b"}},
  };
  for (const auto& [text, values] : cases) {
    auto s = LabelSelector::parse(text);
    ASSERT_TRUE(s.has_value()) << text << ": " << s.error();
    EXPECT_EQ(s->requirements().front().values, values) << text;
  }
  EXPECT_TRUE(LabelSelector::parse("x in (a,)")->matches({{"x", ""}}));
  EXPECT_FALSE(LabelSelector::parse("x in (a,)")->matches({{"x", "b"}}));
}

TEST(LabelSelector, FromObjectNamesTheFieldThatIsNotAMetav1Selector) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"("x")", "not an object"},
      {R"({"matchLabels":[]})", "matchLabels is not an object"},
      {R"({"matchLabels":{"a":1}})", "matchLabels \"a\" is not a string"},
      {R"({"matchExpressions":{}})", "matchExpressions is not an array"},
      {R"({"matchExpressions":[1]})", "a matchExpressions entry is not an object"},
      {R"({"matchExpressions":[{"key":"a","operator":"Near"}]})", "unknown operator \"Near\""},
      {R"({"matchExpressions":[{"key":"a"}]})", "unknown operator \"\""},
      {R"({"matchExpressions":[{"key":"a","operator":"In","values":"b"}]})",
       "the values of \"a\" are not a list"},
      {R"({"matchExpressions":[{"key":"a","operator":"In","values":[1]}]})",
       "a value of \"a\" is not a string"},
      // apimachinery's NewRequirement: a set operator needs values, an existence operator none.
      {R"({"matchExpressions":[{"key":"a","operator":"In"}]})",
       "the values of \"a\" (In) must not be empty"},
      {R"({"matchExpressions":[{"key":"a","operator":"NotIn","values":[]}]})",
       "the values of \"a\" (NotIn) must not be empty"},
      {R"({"matchExpressions":[{"key":"a","operator":"Exists","values":["b"]}]})",
       "\"a\" (Exists) must have no values"},
      {R"({"matchExpressions":[{"key":"Bad Key","operator":"Exists"}]})",
       "\"Bad Key\" is not a valid label key"},
      {R"({"matchExpressions":[{"key":"a","operator":"In","values":["b/c"]}]})",
       "\"b/c\" is not a valid value for \"a\""},
      {R"({"matchLabels":{"a/b/c":"x"}})", "\"a/b/c\" is not a valid label key"},
      {R"({"matchLabels":{"a":"x y"}})", "\"x y\" is not a valid value for \"a\""},
  };
  for (const auto& [text, message] : cases) {
    auto s = LabelSelector::fromObject(Json::parse(text));
    ASSERT_FALSE(s.has_value()) << text;
    EXPECT_THAT(s.error(), HasSubstr(message)) << text;
  }
}

TEST(LabelSelector, LabelsOfKeepsOnlyStringValues) {
  EXPECT_EQ(labelsOf(Json::parse(R"({"a":"1","b":2,"c":null,"d":""})")),
            (Labels{{"a", "1"}, {"d", ""}}));
  EXPECT_TRUE(labelsOf(Json()).empty());
  EXPECT_TRUE(labelsOf(Json::array()).empty());
}

}  // namespace
}  // namespace shardscaler::k8s
