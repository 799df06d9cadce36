// deploy/monitoring/prometheus_rule.yaml: promtool accepts its rules and passes their unit tests
// (tests/unit/deploy/monitoring/alerts_test.yaml), every alert has a firing and a quiet case, and
// every alert follows the mixins' conventions with a paragraph in docs/runbook.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "monitoring.h"
#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::deploy_test {
namespace {

std::vector<std::string> alertNames() {
  std::vector<std::string> names;
  for (const Json& rule : rules()) {
    if (rule.contains("alert")) names.push_back(rule["alert"]);
  }
  return names;
}

std::string lower(std::string s) {
  std::ranges::transform(s, s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

TEST(PrometheusRuleTest, PromtoolChecksTheRulesClean) {
  test_kit::TempDir dir("prometheus-rule-");
  const auto file = dir.write(kRulesFileName, rulesFileText());
  const CommandResult r = promtool({"check", "rules", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS: " + std::to_string(rules().size()) + " rules found"),
            std::string::npos)
      << r.out;
  // Lint findings (duplicate rules, ...) are printed without failing the check.
  EXPECT_EQ(r.out.find("WARNING"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(PrometheusRuleTest, PromtoolUnitTestsOfTheAlertsPass) {
  test_kit::TempDir dir("prometheus-rule-test-");
  // promtool loads the rule file named in the test file relative to the test file.
  dir.write(kRulesFileName, rulesFileText());
  const auto tests = dir.write("alerts_test.yaml", readFile(alertsTestFile()));
  const CommandResult r = promtool({"test", "rules", tests.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SUCCESS"), std::string::npos) << r.out;
  // A missing rule file is only a warning to promtool, after which every quiet case passes.
  EXPECT_EQ(r.out.find("WARNING"), std::string::npos) << r.out;
}

TEST(PrometheusRuleTest, EveryAlertHasAFiringAndAQuietCase) {
  const auto docs = yamlDocuments(readFile(alertsTestFile()));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["rule_files"], Json({kRulesFileName}));
  std::map<std::string, std::pair<int, int>> cases;  // alert -> (firing, quiet)
  for (const Json& test : docs[0]["tests"]) {
    for (const Json& c : test.value("alert_rule_test", Json::array())) {
      auto& [firing, quiet] = cases[c.value("alertname", "")];
      ++(c.value("exp_alerts", Json::array()).empty() ? quiet : firing);
    }
  }
  const auto names = alertNames();
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    EXPECT_GT(cases[name].first, 0) << "no case in which it fires";
    EXPECT_GT(cases[name].second, 0) << "no case in which it stays quiet";
  }
  for (const auto& [name, counts] : cases) {
    EXPECT_NE(std::ranges::find(names, name), names.end())
        << "alerts_test.yaml tests " << name << ", which is no alert of the PrometheusRule";
  }
}

TEST(PrometheusRuleTest, EveryAlertFollowsTheMixinConventions) {
  const Json rule = prometheusRule();
  EXPECT_EQ(rule.value("apiVersion", ""), "monitoring.coreos.com/v1");
  EXPECT_EQ(rule.value("kind", ""), "PrometheusRule");
  std::set<std::string> seen;
  for (const Json& r : rules()) {
    ASSERT_TRUE(r.contains("alert")) << "only alerts here: " << r.dump();
    const std::string name = r["alert"];
    SCOPED_TRACE(name);
    EXPECT_TRUE(seen.insert(name).second) << "two alerts of one name";
    EXPECT_TRUE(std::regex_match(name, std::regex("Shardscaler[A-Z][A-Za-z]+")));
    const std::string severity = r["labels"].value("severity", "");
    EXPECT_TRUE(severity == "critical" || severity == "warning" || severity == "info")
        << "severity " << severity;
    const Json& annotations = r.value("annotations", Json::object());
    EXPECT_FALSE(annotations.value("summary", "").empty());
    EXPECT_FALSE(annotations.value("description", "").empty());
    EXPECT_EQ(annotations.value("runbook_url", ""), "docs/runbook.md#" + lower(name));
    if (r.contains("for")) {
      EXPECT_TRUE(std::regex_match(r["for"].get<std::string>(), std::regex("[0-9]+[smh]")));
    }
  }
}

// GitHub's anchor of a heading "### ShardscalerDown" is "shardscalerdown".
TEST(PrometheusRuleTest, TheRunbookHasAParagraphPerAlertAndNoOther) {
  const std::string runbook = readFile(sourceDir() / "docs" / "runbook.md");
  std::set<std::string> headings;
  static const std::regex kHeading(R"((^|\n)### (\S+)\n)");
  for (std::sregex_iterator m(runbook.begin(), runbook.end(), kHeading), end; m != end; ++m) {
    headings.insert((*m)[2]);
  }
  const auto names = alertNames();
  EXPECT_EQ(headings, std::set<std::string>(names.begin(), names.end()));
}

}  // namespace
}  // namespace shardscaler::deploy_test
