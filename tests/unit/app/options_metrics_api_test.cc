// The external metrics API's flags of `shardscaler run`: off by default, the Service from the
// pod's namespace, its names in the serving certificate, the staleness bound, and clear errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace options_metrics_api_test {
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

TEST(OptionsMetricsApiTest, OffByDefaultAndTheCertificateUnchanged) {
  const RunOptions o = run({"run"});
  EXPECT_FALSE(o.external_metrics_api);
  EXPECT_FALSE(o.register_api_service);
  EXPECT_EQ(o.external_metrics_service_namespace, "monitoring");
  EXPECT_EQ(o.external_metrics_service, "shardscaler-metrics-api");
  EXPECT_EQ(o.external_metrics_max_age_intervals, 3);
  EXPECT_EQ(o.external_metrics_min_max_age, std::chrono::seconds(10));
  EXPECT_EQ(o.webhook_hosts.size(), 2);
}

TEST(OptionsMetricsApiTest, OnItsServiceJoinsTheServingCertificate) {
  const RunOptions o =
      run({"run", "--external-metrics-api", "--external-metrics-service=ops/api",
           "--external-metrics-max-age-intervals=5", "--external-metrics-min-max-age=1m"});
  EXPECT_TRUE(o.external_metrics_api);
  EXPECT_FALSE(o.register_api_service);
  EXPECT_EQ(o.external_metrics_service_namespace, "ops");
  EXPECT_EQ(o.external_metrics_service, "api");
  EXPECT_EQ(o.external_metrics_max_age_intervals, 5);
  EXPECT_EQ(o.external_metrics_min_max_age, std::chrono::minutes(1));
  EXPECT_EQ(o.webhook_hosts, (Strings{"shardscaler-webhook.monitoring.svc",
                                      "shardscaler-webhook.monitoring.svc.cluster.local",
                                      "api.ops.svc", "api.ops.svc.cluster.local"}));
  // Given hosts are kept, and the Service's names added once.
  const RunOptions given = run({"run", "--external-metrics-api=true",
                                "--webhook-hosts=shardscaler-metrics-api.monitoring.svc"});
  EXPECT_EQ(given.webhook_hosts, (Strings{"shardscaler-metrics-api.monitoring.svc",
                                          "shardscaler-metrics-api.monitoring.svc.cluster.local"}));
}

TEST(OptionsMetricsApiTest, RegisteringTheApiServiceNeedsTheApi) {
  EXPECT_TRUE(
      run({"run", "--external-metrics-api", "--register-api-service"}).register_api_service);
  EXPECT_THAT(parse({"run", "--register-api-service"}).error(),
              HasSubstr("--register-api-service registers the external metrics API: it needs "
                        "--external-metrics-api"));
}

TEST(OptionsMetricsApiTest, BadValuesNameTheFlag) {
  EXPECT_THAT(parse({"run", "--external-metrics-api", "--webhook-bind-address=0"}).error(),
              HasSubstr("--webhook-bind-address"));
  EXPECT_THAT(parse({"run", "--external-metrics-max-age-intervals=0"}).error(),
              HasSubstr("--external-metrics-max-age-intervals"));
  EXPECT_THAT(parse({"run", "--external-metrics-service=Bad_Name"}).error(),
              HasSubstr("--external-metrics-service"));
  EXPECT_THAT(parse({"run", "--external-metrics-min-max-age=soon"}).error(),
              HasSubstr("--external-metrics-min-max-age"));
}

TEST(OptionsMetricsApiTest, HelpListsTheFlags) {
  const std::string help = runHelp();
  for (const char* line :
       {"--external-metrics-api", "--external-metrics-service [NS/]NAME", "--register-api-service",
        "--external-metrics-max-age-intervals N", "--external-metrics-min-max-age DURATION"}) {
    EXPECT_THAT(help, HasSubstr(line));
  }
}

}  // namespace
}  // namespace options_metrics_api_test
}  // namespace shardscaler::app
