// `shardscaler run|plan|version` command lines: defaults, both flag spellings, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/app/run_options.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

OptionsEnvironment testEnv() {
  OptionsEnvironment env;
  env.default_identity = "host-a_1234";
  return env;
}

Expected<Command> parse(std::initializer_list<std::string_view> args,
                        const OptionsEnvironment& env = testEnv()) {
  std::vector<std::string_view> v(args);
  return parseCommandLine(std::span<const std::string_view>(v), env);
}

RunOptions parseRun(std::initializer_list<std::string_view> args,
                    const OptionsEnvironment& env = testEnv()) {
  auto c = parse(args, env);
  EXPECT_TRUE(c.has_value()) << c.error();
  if (!c || !std::holds_alternative<RunOptions>(*c)) return {};
  return std::get<RunOptions>(*c);
}

std::string errorOf(std::initializer_list<std::string_view> args) {
  auto c = parse(args);
  EXPECT_FALSE(c.has_value());
  return c ? "" : c.error();
}

TEST(OptionsFlagsTest, RunDefaultsFollowControllerRuntime) {
  const RunOptions o = parseRun({"run"});
  EXPECT_EQ(o.kubeconfig, "");
  EXPECT_TRUE(o.namespaces.empty());
  ASSERT_TRUE(o.metrics_bind_address.has_value());
  EXPECT_EQ(o.metrics_bind_address->toString(), ":8080");
  ASSERT_TRUE(o.health_probe_bind_address.has_value());
  EXPECT_EQ(o.health_probe_bind_address->toString(), ":8081");
  EXPECT_TRUE(o.leader_elect);
  EXPECT_EQ(o.leader_election_id, "shardscaler");
  EXPECT_EQ(o.leader_election_namespace, "default");
  EXPECT_EQ(o.lease_duration, seconds(15));
  EXPECT_EQ(o.renew_deadline, seconds(10));
  EXPECT_EQ(o.retry_period, seconds(2));
  EXPECT_EQ(o.workers, 8);
  EXPECT_EQ(o.log_level, LogLevel::Info);
  EXPECT_EQ(o.log_format, LogFormat::Text);
  EXPECT_EQ(o.identity, "host-a_1234");
  EXPECT_EQ(o.shutdown_timeout, seconds(10));
}

TEST(OptionsFlagsTest, LeaderElectionNamespaceDefaultsToThePodNamespace) {
  OptionsEnvironment env = testEnv();
  env.pod_namespace = "monitoring";
  EXPECT_EQ(parseRun({"run"}, env).leader_election_namespace, "monitoring");
  EXPECT_EQ(parseRun({"run", "--leader-election-namespace=ops"}, env).leader_election_namespace,
            "ops");
}

TEST(OptionsFlagsTest, EveryFlagInBothSpellings) {
  const RunOptions eq = parseRun(
      {"run", "--kubeconfig=/k", "--namespace=a", "--metrics-bind-address=127.0.0.1:0",
       "--health-probe-bind-address=[::1]:9000", "--leader-elect=false",
       "--leader-election-id=my-lease", "--leader-election-namespace=ops", "--lease-duration=30s",
       "--renew-deadline=20s", "--retry-period=500ms", "--workers=7", "--log-level=debug",
       "--log-format=json", "--identity=me", "--shutdown-timeout=1m30s"});
  const RunOptions sp = parseRun({"run",
                                  "--kubeconfig",
                                  "/k",
                                  "--namespace",
                                  "a",
                                  "--metrics-bind-address",
                                  "127.0.0.1:0",
                                  "--health-probe-bind-address",
                                  "[::1]:9000",
                                  "--leader-elect=false",
                                  "--leader-election-id",
                                  "my-lease",
                                  "--leader-election-namespace",
                                  "ops",
                                  "--lease-duration",
                                  "30s",
                                  "--renew-deadline",
                                  "20s",
                                  "--retry-period",
                                  "500ms",
                                  "--workers",
                                  "7",
                                  "--log-level",
                                  "debug",
                                  "--log-format",
                                  "json",
                                  "--identity",
                                  "me",
                                  "--shutdown-timeout",
                                  "1m30s"});
  for (const RunOptions& o : {eq, sp}) {
    EXPECT_EQ(o.kubeconfig, "/k");
    EXPECT_EQ(o.namespaces, std::vector<std::string>{"a"});
    EXPECT_EQ(o.metrics_bind_address, (BindAddress{"127.0.0.1", 0}));
    EXPECT_EQ(o.health_probe_bind_address, (BindAddress{"::1", 9000}));
    EXPECT_FALSE(o.leader_elect);
    EXPECT_EQ(o.leader_election_id, "my-lease");
    EXPECT_EQ(o.leader_election_namespace, "ops");
    EXPECT_EQ(o.lease_duration, seconds(30));
    EXPECT_EQ(o.renew_deadline, seconds(20));
    EXPECT_EQ(o.retry_period, std::chrono::milliseconds(500));
    EXPECT_EQ(o.workers, 7);
    EXPECT_EQ(o.log_level, LogLevel::Debug);
    EXPECT_EQ(o.log_format, LogFormat::Json);
    EXPECT_EQ(o.identity, "me");
    EXPECT_EQ(o.shutdown_timeout, seconds(90));
  }
}

TEST(OptionsFlagsTest, NamespaceRepeatsAndSplitsOnCommas) {
  EXPECT_EQ(parseRun({"run", "--namespace", "a", "--namespace=b,c", "--namespace", "a"}).namespaces,
            (std::vector<std::string>{"a", "b", "c"}));
}

TEST(OptionsFlagsTest, BooleanFlagWithoutValueIsTrue) {
  EXPECT_TRUE(parseRun({"run", "--leader-elect=false", "--leader-elect"}).leader_elect);
  EXPECT_FALSE(parseRun({"run", "--leader-elect=0"}).leader_elect);
}

TEST(OptionsFlagsTest, ZeroDisablesAnEndpoint) {
  const RunOptions o =
      parseRun({"run", "--metrics-bind-address=0", "--health-probe-bind-address=0"});
  EXPECT_FALSE(o.metrics_bind_address.has_value());
  EXPECT_FALSE(o.health_probe_bind_address.has_value());
}

TEST(OptionsFlagsTest, LastValueOfARepeatedFlagWins) {
  EXPECT_EQ(parseRun({"run", "--workers=3", "--workers", "5"}).workers, 5);
}

TEST(OptionsFlagsTest, ErrorsNameTheFlagAndTheProblem) {
  EXPECT_EQ(errorOf({"run", "--foo"}), "unknown flag \"--foo\"");
  EXPECT_EQ(errorOf({"run", "--foo=1"}), "unknown flag \"--foo\"");
  EXPECT_EQ(errorOf({"run", "--worker=3"}),
            "unknown flag \"--worker\" (did you mean \"--workers\"?)");
  EXPECT_EQ(errorOf({"run", "-kubeconfig", "/k"}),
            "unknown flag \"-kubeconfig\" (did you mean \"--kubeconfig\"?)");
  EXPECT_EQ(errorOf({"run", "--workers", "x"}), "--workers: \"x\" is not a number");
  EXPECT_EQ(errorOf({"run", "--workers=0"}), "--workers: must be between 1 and 1024, got 0");
  EXPECT_EQ(errorOf({"run", "--workers=99999999999"}),
            "--workers: must be between 1 and 1024, got 99999999999");
  EXPECT_EQ(errorOf({"run", "--workers"}), "--workers: missing value (N)");
  EXPECT_EQ(errorOf({"run", "--kubeconfig", "--workers=2"}), "--kubeconfig: missing value (PATH)");
  EXPECT_EQ(errorOf({"run", "--leader-elect=maybe"}),
            "--leader-elect: \"maybe\" is not a boolean (true or false)");
  EXPECT_EQ(errorOf({"run", "--leader-elect", "false"}),
            "unexpected argument \"false\" (a boolean flag takes its value with '=': "
            "--leader-elect=false)");
  EXPECT_EQ(errorOf({"run", "extra"}), "unexpected argument \"extra\"");
  EXPECT_EQ(errorOf({"run", "--", "extra"}), "unexpected argument \"extra\"");
  EXPECT_EQ(errorOf({"run", "--lease-duration=15"}),
            "--lease-duration: \"15\" is not a duration: missing unit (use Go syntax such as 10s, "
            "1m30s or 250ms)");
  EXPECT_EQ(errorOf({"run", "--retry-period=0s"}),
            "--retry-period: must be greater than 0, got \"0s\"");
  EXPECT_EQ(errorOf({"run", "--log-level=verbose"}),
            "--log-level: \"verbose\" is not one of debug, info, warn, error");
  EXPECT_EQ(errorOf({"run", "--log-format=xml"}), "--log-format: \"xml\" is not one of text, json");
  EXPECT_EQ(errorOf({"run", "--metrics-bind-address=8080"}),
            "--metrics-bind-address: \"8080\" is not host:port (missing port; e.g. :8080 or "
            "127.0.0.1:0)");
  EXPECT_EQ(errorOf({"run", "--health-probe-bind-address=:http"}),
            "--health-probe-bind-address: \":http\" is not host:port (port \"http\" is not a "
            "number; e.g. :8080 or 127.0.0.1:0)");
  EXPECT_EQ(errorOf({"run", "--namespace=Kube_System"}),
            "--namespace: \"Kube_System\" is not a valid namespace name (lowercase letters, digits "
            "and '-', at most 63)");
  EXPECT_EQ(errorOf({"run", "--namespace="}), "--namespace: empty namespace name");
  EXPECT_EQ(errorOf({"run", "--leader-election-id=Bad_Name"}),
            "--leader-election-id: \"Bad_Name\" is not a valid object name (lowercase letters, "
            "digits, '-' and '.', at most 253)");
  EXPECT_EQ(errorOf({"run", "--config="}), "--config: empty path");
}

TEST(OptionsFlagsTest, AnEmptyValueAfterTheEqualsSignIsTheEmptyValue) {
  // CLI11 reads "--flag=" as "--flag" and would take the next argument as its value.
  const RunOptions o = parseRun({"run", "--guard-exempt-groups=", "--workers=3"});
  EXPECT_TRUE(o.guard_exempt_groups.empty());
  EXPECT_EQ(o.workers, 3);
  EXPECT_EQ(errorOf({"run", "--namespace=", "--workers=3"}), "--namespace: empty namespace name");
  EXPECT_EQ(errorOf({"run", "--leader-elect="}),
            "--leader-elect: \"\" is not a boolean (true or false)");
  EXPECT_EQ(errorOf({"run", "--workers=3", "--workers"}), "--workers: missing value (N)");
  EXPECT_EQ(errorOf({"run", "--identity", "--workers"}), "--identity: missing value (ID)");
}

TEST(OptionsFlagsTest, LeaderElectionTimingsFollowClientGoRules) {
  EXPECT_EQ(errorOf({"run", "--lease-duration=10s"}),
            "--lease-duration (10s) must be greater than --renew-deadline (10s)");
  EXPECT_EQ(errorOf({"run", "--retry-period=9s"}),
            "--renew-deadline (10s) must be greater than 1.2 x --retry-period (9s)");
  // Without leader election the timings are unused, so they are not checked.
  EXPECT_FALSE(parseRun({"run", "--leader-elect=false", "--lease-duration=1s"}).leader_elect);
}

TEST(OptionsFlagsTest, Commands) {
  EXPECT_EQ(errorOf({}), "missing command (run, plan, release or version); see shardscaler --help");
  EXPECT_EQ(errorOf({"rnu"}),
            "unknown command \"rnu\" (run, plan, release or version) (did you mean \"run\"?)");
  EXPECT_EQ(errorOf({"--kubeconfig=/k"}),
            "unknown flag \"--kubeconfig=/k\" (flags go after the command: run, plan, release or "
            "version)");
  EXPECT_EQ(errorOf({"version", "--short"}), "unknown flag \"--short\"");
  auto v = parse({"version"});
  ASSERT_TRUE(v);
  EXPECT_TRUE(std::holds_alternative<VersionCommand>(*v));
}

TEST(OptionsFlagsTest, PlanOptions) {
  auto c = parse({"plan", "--shardset", "monitoring/main", "--shards=4", "--kubeconfig", "/k"});
  ASSERT_TRUE(c) << c.error();
  const auto& p = std::get<PlanOptions>(*c);
  EXPECT_EQ(p.shardset_namespace, "monitoring");
  EXPECT_EQ(p.shardset_name, "main");
  EXPECT_EQ(p.shards, 4);
  EXPECT_EQ(p.kubeconfig, "/k");

  EXPECT_EQ(errorOf({"plan", "--shards=3"}), "plan: --shardset is required");
  EXPECT_EQ(errorOf({"plan", "--shardset=a/b"}), "plan: --shards is required");
  EXPECT_EQ(errorOf({"plan", "--shardset=main", "--shards=3"}),
            "--shardset: \"main\" must be NAMESPACE/NAME");
  EXPECT_EQ(errorOf({"plan", "--shardset=a/b", "--shards=-1"}),
            "--shards: must be between 0 and 100000, got -1");
  EXPECT_EQ(errorOf({"plan", "--shardset=a/b", "--shards=3", "--workers=2"}),
            "unknown flag \"--workers\"");
}

TEST(OptionsFlagsTest, HelpListsEveryFlagWithItsDefault) {
  // --help wins wherever it is, even after a bad value (values are checked after the scan).
  for (auto args : {std::vector<std::string_view>{"run", "--help"},
                    std::vector<std::string_view>{"run", "--workers=x", "-h"},
                    std::vector<std::string_view>{"help", "run"}}) {
    auto c = parseCommandLine(std::span<const std::string_view>(args), testEnv());
    ASSERT_TRUE(c) << c.error();
    EXPECT_EQ(std::get<HelpCommand>(*c).text, runHelp());
  }
  // ... but not after an unknown flag, which ends the scan.
  EXPECT_EQ(errorOf({"run", "--nope", "--help"}), "unknown flag \"--nope\"");
  const std::string help = runHelp();
  for (const char* line : {"--config PATH",
                           "--kubeconfig PATH",
                           "(default: $KUBECONFIG, else in-cluster)",
                           "--namespace NS",
                           "(default: all namespaces)",
                           "--metrics-bind-address ADDRESS",
                           "(default: :8080)",
                           "--health-probe-bind-address ADDRESS",
                           "(default: :8081)",
                           "--leader-elect ",
                           "(default: true)",
                           "--leader-election-id NAME",
                           "(default: shardscaler)",
                           "--leader-election-namespace NS",
                           "(default: the pod's namespace, else default)",
                           "--lease-duration DURATION",
                           "(default: 15s)",
                           "--renew-deadline DURATION",
                           "(default: 10s)",
                           "--retry-period DURATION",
                           "(default: 2s)",
                           "--workers N",
                           "(default: 8)",
                           "--log-level LEVEL",
                           "(default: info)",
                           "--log-format FORMAT",
                           "(default: text)",
                           "--identity ID",
                           "(default: <hostname>_<random uuid>)",
                           "--shutdown-timeout DURATION",
                           "-h, --help"}) {
    EXPECT_THAT(help, HasSubstr(line));
  }
  const std::string plan = planHelp();
  for (const char* line : {"--shardset NS/NAME", "--shards N", "--kubeconfig PATH"}) {
    EXPECT_THAT(plan, HasSubstr(line));
  }
  auto top = parse({"--help"});
  ASSERT_TRUE(top);
  EXPECT_THAT(std::get<HelpCommand>(*top).text, HasSubstr("Commands:"));
  EXPECT_EQ(std::get<HelpCommand>(*top).text, mainHelp());
}

TEST(OptionsFlagsTest, HelpCommandShowsTheHelpOfACommand) {
  auto text = [](std::initializer_list<std::string_view> args) {
    auto c = parse(args);
    EXPECT_TRUE(c) << c.error();
    return c && std::holds_alternative<HelpCommand>(*c) ? std::get<HelpCommand>(*c).text : "";
  };
  EXPECT_EQ(text({"help"}), mainHelp());
  EXPECT_EQ(text({"help", "plan"}), planHelp());
  EXPECT_EQ(text({"version", "--help"}), versionHelp());
  EXPECT_THAT(mainHelp(), HasSubstr("  run "));
  EXPECT_THAT(mainHelp(), HasSubstr("  plan "));
  EXPECT_THAT(mainHelp(), HasSubstr("  version "));
  EXPECT_THAT(mainHelp(), HasSubstr("  release "));
  EXPECT_THAT(planHelp(), HasSubstr("Usage: shardscaler plan [flags]"));
  EXPECT_EQ(text({"help", "release"}), releaseHelp());
  EXPECT_THAT(releaseHelp(), HasSubstr("Usage: shardscaler release [flags]"));
  for (const char* line : {"--namespace NS", "--timeout DURATION", "(default: 2m)"}) {
    EXPECT_THAT(releaseHelp(), HasSubstr(line));
  }
  EXPECT_EQ(errorOf({"help", "nope"}), "unknown command \"nope\" (run, plan, release or version)");
}

TEST(OptionsFlagsTest, ReleaseTakesNamespacesATimeoutAndAKubeconfig) {
  auto c =
      parse({"release", "--namespace=a,b", "--namespace", "c", "--timeout=30s", "--kubeconfig=/k"});
  ASSERT_TRUE(c) << c.error();
  const auto& o = std::get<ReleaseOptions>(*c);
  EXPECT_EQ(o.namespaces, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(o.timeout, std::chrono::seconds(30));
  EXPECT_EQ(o.kubeconfig, "/k");
  const auto defaults = parse({"release"});
  ASSERT_TRUE(defaults) << defaults.error();
  EXPECT_TRUE(std::get<ReleaseOptions>(*defaults).namespaces.empty());
  EXPECT_EQ(std::get<ReleaseOptions>(*defaults).timeout, std::chrono::minutes(2));
  EXPECT_THAT(errorOf({"release", "--timeout=soon"}), HasSubstr("--timeout"));
  EXPECT_THAT(errorOf({"release", "--namespace=Bad_Name"}), HasSubstr("--namespace"));
}

TEST(OptionsFlagsTest, ProcessEnvironmentGivesAUniqueIdentity) {
  const auto a = OptionsEnvironment::fromProcess();
  const auto b = OptionsEnvironment::fromProcess();
  EXPECT_NE(a.default_identity, b.default_identity);
  EXPECT_THAT(a.default_identity, ::testing::MatchesRegex(".+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                                          "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
}

}  // namespace
}  // namespace shardscaler::app
