// The ingestion monitor's flags of `shardscaler run`: which Prometheus URLs a ShardSet may name.
// The default is the cluster's Services on port 9090; given patterns replace it; the config file
// takes the same names in camelCase; a bad pattern or regex names its flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace options_ingestion_test {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

Expected<Command> parse(std::initializer_list<std::string_view> args) {
  std::vector<std::string_view> v(args);
  OptionsEnvironment env;
  env.default_identity = "h_1";
  env.pod_namespace = "monitoring";
  return parseCommandLine(std::span<const std::string_view>(v), env);
}

RunOptions run(std::initializer_list<std::string_view> args) {
  auto c = parse(args);
  EXPECT_TRUE(c) << c.error();
  return c ? std::get<RunOptions>(*c) : RunOptions{};
}

TEST(OptionsIngestionTest, TheDefaultAllowsTheClustersServicesOnPrometheusPort) {
  const RunOptions o = run({"run"});
  EXPECT_EQ(o.prometheus_url_allow,
            (Strings{"http://*.svc:9090", "https://*.svc:9090", "http://*.svc.cluster.local:9090",
                     "https://*.svc.cluster.local:9090"}));
  EXPECT_EQ(o.prometheus_url_allow_regex, "");
}

TEST(OptionsIngestionTest, GivenPatternsReplaceTheDefaultAndAnEmptyOneAllowsNone) {
  EXPECT_EQ(run({"run", "--prometheus-url-allow=http://127.0.0.1:*",
                 "--prometheus-url-allow=https://thanos.example/prom,http://*.svc:9090"})
                .prometheus_url_allow,
            (Strings{"http://127.0.0.1:*", "https://thanos.example/prom", "http://*.svc:9090"}));
  const RunOptions only_regex =
      run({"run",
           "--prometheus-url-allow=", R"(--prometheus-url-allow-regex=https://[a-z]+\.example)"});
  EXPECT_TRUE(only_regex.prometheus_url_allow.empty());
  EXPECT_EQ(only_regex.prometheus_url_allow_regex, R"(https://[a-z]+\.example)");
}

TEST(OptionsIngestionTest, BadPatternsAndRegexesNameTheFlag) {
  for (std::string_view arg :
       {"--prometheus-url-allow=prometheus:9090", "--prometheus-url-allow=http://*.svc:9090/?x=y",
        "--prometheus-url-allow=http://u:p@*.svc"}) {
    auto c = parse({"run", arg});
    ASSERT_FALSE(c.has_value()) << arg;
    EXPECT_THAT(c.error(), HasSubstr("--prometheus-url-allow")) << arg;
  }
  auto c = parse({"run", "--prometheus-url-allow-regex=(unclosed"});
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error(), HasSubstr("--prometheus-url-allow-regex"));
}

TEST(OptionsIngestionTest, TheConfigFileTakesTheCamelCaseNames) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("shardscaler-ingestion-options-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "prometheusUrlAllow: [\"http://*.monitoring.svc:9090\"]\n"
                         "prometheusUrlAllowRegex: \"https://thanos\\\\.example/.*\"\n";
  const std::string config = "--config=" + path.string();
  const RunOptions o = run({"run", config});
  std::filesystem::remove(path);
  EXPECT_EQ(o.prometheus_url_allow, Strings{"http://*.monitoring.svc:9090"});
  EXPECT_EQ(o.prometheus_url_allow_regex, R"(https://thanos\.example/.*)");
}

TEST(OptionsIngestionTest, HelpListsTheFlags) {
  const std::string help = runHelp();
  EXPECT_THAT(help, HasSubstr("--prometheus-url-allow PATTERN"));
  EXPECT_THAT(help, HasSubstr("--prometheus-url-allow-regex REGEX"));
}

}  // namespace
}  // namespace options_ingestion_test
}  // namespace shardscaler::app
