// The scrape jobs of Probes and ScrapeConfigs as the operator (v0.93) generates them, with the
// target's scrape classes: where a class's relabelings go, and which jobs get the operator's
// sharding rules (a ScrapeConfig none after any hashmod, a Probe always, keyed on __param_target).
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "prometheus_config.h"
#include "scrape_jobs.h"

namespace shardscaler::emulator {
namespace {

Json target(const Json& spec) {
  return Json{{"metadata", {{"name", "main"}, {"namespace", "mon"}, {"uid", "u"}}}, {"spec", spec}};
}

Json scrapeConfig(const std::string& name, const Json& spec_patch = Json::object()) {
  Json spec{{"staticConfigs", Json::array({{{"targets", {"127.0.0.1:9", "127.0.0.2:9"}}}})}};
  spec.merge_patch(spec_patch);
  return Json{{"metadata", {{"name", name}, {"namespace", "mon"}}}, {"spec", spec}};
}

Json probe(const std::string& name) {
  return Json{{"metadata", {{"name", name}, {"namespace", "mon"}}},
              {"spec",
               {{"prober", {{"url", "127.0.0.1:9115"}}},
                {"module", "http_2xx"},
                {"targets", {{"staticConfig", {{"static", {"http://a", "http://b"}}}}}}}}};
}

Json hashmodRule() {
  return Json{{"sourceLabels", {"__address__"}},
              {"targetLabel", "__tmp_bucket"},
              {"modulus", 8},
              {"action", "HashMod"}};
}

std::vector<std::string> actions(const YAML::Node& job) {
  std::vector<std::string> out;
  for (const auto& r : job["relabel_configs"]) {
    out.push_back(r["action"] ? r["action"].as<std::string>() : "(replace)");
  }
  return out;
}

TEST(ScrapeJobsTest, AScrapeConfigGetsTheDefaultClassThenTheOperatorsShardingRules) {
  const Json t =
      target({{"shards", 3},
              {"scrapeClasses", Json::array({{{"name", "c"},
                                              {"default", true},
                                              {"relabelings", Json::array({{
                                                                  {"targetLabel", "team"},
                                                                  {"replacement", "a"},
                                                              }})}}})}});
  auto classes = scrapeClasses(t);
  ASSERT_TRUE(classes);
  const auto jobs = scrapeJobs({.scrape_configs = {scrapeConfig("s")}}, *classes, 3);
  ASSERT_EQ(jobs.size(), 1u);
  const YAML::Node& job = jobs[0];
  EXPECT_EQ(job["job_name"].as<std::string>(), "scrapeConfig/mon/s");
  EXPECT_EQ(job["static_configs"][0]["targets"].size(), 2u);
  const YAML::Node rules = job["relabel_configs"];
  ASSERT_EQ(rules.size(), 5u);
  EXPECT_EQ(rules[0]["target_label"].as<std::string>(), "__tmp_prometheus_job_name");
  EXPECT_EQ(rules[1]["target_label"].as<std::string>(), "team");
  EXPECT_EQ(rules[1]["replacement"].as<std::string>(), "a");
  EXPECT_EQ(rules[3]["modulus"].as<int>(), 3);
  EXPECT_EQ(rules[4]["regex"].as<std::string>(), "$(SHARD);|.+;.+");
}

TEST(ScrapeJobsTest, AScrapeConfigAfterAnyHashmodGetsNoShardingRulesAndNoneWithOneShard) {
  const Json t = target(
      {{"scrapeClasses",
        Json::array({{{"name", "c"}, {"default", true}, {"relabelings", {hashmodRule()}}}})}});
  auto classes = scrapeClasses(t);
  ASSERT_TRUE(classes);
  auto jobs = scrapeJobs({.scrape_configs = {scrapeConfig("s")}}, *classes, 3);
  EXPECT_EQ(actions(jobs[0]), (std::vector<std::string>{"(replace)", "hashmod"}));
  EXPECT_EQ(jobs[0]["relabel_configs"][1]["action"].as<std::string>(), "hashmod")
      << "the action is written lower-cased";
  ScrapeClasses none;
  jobs = scrapeJobs({.scrape_configs = {scrapeConfig("s")}}, none, 1);
  EXPECT_EQ(actions(jobs[0]), (std::vector<std::string>{"(replace)"}));
}

TEST(ScrapeJobsTest, AProbeIsShardedOnItsTargetAfterTheClassWhateverTheClassHolds) {
  const Json t = target(
      {{"scrapeClasses",
        Json::array({{{"name", "c"}, {"default", true}, {"relabelings", {hashmodRule()}}}})}});
  auto classes = scrapeClasses(t);
  ASSERT_TRUE(classes);
  const auto jobs = scrapeJobs({.probes = {probe("p")}}, *classes, 2);
  ASSERT_EQ(jobs.size(), 1u);
  const YAML::Node rules = jobs[0]["relabel_configs"];
  EXPECT_EQ(jobs[0]["job_name"].as<std::string>(), "probe/mon/p");
  EXPECT_EQ(jobs[0]["params"]["module"][0].as<std::string>(), "http_2xx");
  EXPECT_EQ(jobs[0]["static_configs"][0]["labels"]["namespace"].as<std::string>(), "mon");
  ASSERT_EQ(rules.size(), 8u);
  EXPECT_EQ(rules[1]["target_label"].as<std::string>(), "__param_target");
  EXPECT_EQ(rules[3]["replacement"].as<std::string>(), "127.0.0.1:9115");
  EXPECT_EQ(rules[4]["action"].as<std::string>(), "hashmod");  // the class's, after the prober's
  EXPECT_EQ(rules[5]["source_labels"][0].as<std::string>(), "__param_target");
  EXPECT_EQ(rules[6]["modulus"].as<int>(), 2);
}

TEST(ScrapeJobsTest, AnObjectNamingAClassTheTargetLacksIsRejected) {
  ScrapeClasses none;
  const auto jobs =
      scrapeJobs({.scrape_configs = {scrapeConfig("s", {{"scrapeClass", "missing"}})}}, none, 2);
  EXPECT_TRUE(jobs.empty());
}

TEST(ScrapeJobsTest, AnObjectNamingAClassGetsThatOneNotTheDefault) {
  const Json t =
      target({{"scrapeClasses",
               Json::array({{{"name", "d"}, {"default", true}, {"relabelings", {hashmodRule()}}},
                            {{"name", "plain"}}})}});
  auto classes = scrapeClasses(t);
  ASSERT_TRUE(classes);
  const auto jobs =
      scrapeJobs({.scrape_configs = {scrapeConfig("s", {{"scrapeClass", "plain"}})}}, *classes, 2);
  EXPECT_EQ(actions(jobs[0]),
            (std::vector<std::string>{"(replace)", "replace", "hashmod", "keep"}));
}

TEST(ScrapeJobsTest, TwoDefaultClassesFailTheConfiguration) {
  const Json t = target({{"scrapeConfigSelector", Json::object()},
                         {"scrapeClasses", Json::array({{{"name", "a"}, {"default", true}},
                                                        {{"name", "b"}, {"default", true}}})}});
  auto config = generateConfiguration(prometheusKind(), t, "");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().kind, k8s::ErrorKind::Invalid);
}

TEST(ScrapeJobsTest, TheConfigurationListsProbesThenScrapeConfigsThenTheAdditionalOnes) {
  const Json t = target({{"shards", 2}, {"scrapeConfigSelector", Json::object()}});
  auto config = generateConfiguration(
      prometheusKind(), t, "- job_name: extra\n",
      {.probes = {probe("p")}, .scrape_configs = {scrapeConfig("b"), scrapeConfig("a")}});
  ASSERT_TRUE(config) << config.error().message;
  const YAML::Node jobs = YAML::Load(*config)["scrape_configs"];
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0]["job_name"].as<std::string>(), "probe/mon/p");
  EXPECT_EQ(jobs[1]["job_name"].as<std::string>(), "scrapeConfig/mon/a");
  EXPECT_EQ(jobs[2]["job_name"].as<std::string>(), "scrapeConfig/mon/b");
  EXPECT_EQ(jobs[3]["job_name"].as<std::string>(), "extra");
}

}  // namespace
}  // namespace shardscaler::emulator
