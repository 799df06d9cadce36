// `shardscaler run --config FILE`: camelCase keys, flags win, one located error per bad file.
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
namespace {

using std::chrono::seconds;

class OptionsConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("shardscaler-options-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(std::string_view yaml) {
    auto path = (dir_ / "config.yaml").string();
    std::ofstream(path) << yaml;
    return path;
  }

  Expected<Command> parse(std::initializer_list<std::string_view> args) {
    std::vector<std::string_view> v(args);
    OptionsEnvironment env;
    env.default_identity = "h_1";
    return parseCommandLine(std::span<const std::string_view>(v), env);
  }

  RunOptions run(std::initializer_list<std::string_view> args) {
    auto c = parse(args);
    EXPECT_TRUE(c) << c.error();
    return c ? std::get<RunOptions>(*c) : RunOptions{};
  }

  std::string error(std::initializer_list<std::string_view> args) {
    auto c = parse(args);
    EXPECT_FALSE(c);
    return c ? "" : c.error();
  }

  std::filesystem::path dir_;
};

TEST_F(OptionsConfigFileTest, EveryKey) {
  const std::string path = write(R"(# all of them
kubeconfig: /etc/kube/config
namespaces: [monitoring, team-a]
metricsBindAddress: 127.0.0.1:0
healthProbeBindAddress: ":9443"
leaderElect: false
leaderElectionId: shardscaler-lock
leaderElectionNamespace: ops
leaseDuration: 1m
renewDeadline: 40s
retryPeriod: 5s
workers: 4
logLevel: warn
logFormat: json
identity: pod-x
shutdownTimeout: 1m30s
)");
  const RunOptions o = run({"run", "--config", path});
  EXPECT_EQ(o.config_file, path);
  EXPECT_EQ(o.kubeconfig, "/etc/kube/config");
  EXPECT_EQ(o.namespaces, (std::vector<std::string>{"monitoring", "team-a"}));
  EXPECT_EQ(o.metrics_bind_address, (BindAddress{"127.0.0.1", 0}));
  EXPECT_EQ(o.health_probe_bind_address, (BindAddress{"", 9443}));
  EXPECT_FALSE(o.leader_elect);
  EXPECT_EQ(o.leader_election_id, "shardscaler-lock");
  EXPECT_EQ(o.leader_election_namespace, "ops");
  EXPECT_EQ(o.lease_duration, seconds(60));
  EXPECT_EQ(o.renew_deadline, seconds(40));
  EXPECT_EQ(o.retry_period, seconds(5));
  EXPECT_EQ(o.workers, 4);
  EXPECT_EQ(o.log_level, LogLevel::Warn);
  EXPECT_EQ(o.log_format, LogFormat::Json);
  EXPECT_EQ(o.identity, "pod-x");
  EXPECT_EQ(o.shutdown_timeout, seconds(90));
}

TEST_F(OptionsConfigFileTest, FlagsWinOverTheFileWhereverTheyAppear) {
  const std::string path = write("workers: 4\nnamespaces: [a, b]\nlogLevel: debug\n");
  const RunOptions o = run({"run", "--workers=9", "--namespace", "c", "--config", path});
  EXPECT_EQ(o.workers, 9);
  EXPECT_EQ(o.namespaces, std::vector<std::string>{"c"});  // replaced, not extended
  EXPECT_EQ(o.log_level, LogLevel::Debug);                 // from the file
}

TEST_F(OptionsConfigFileTest, EmptyFileSetsNothing) {
  const RunOptions o = run({"run", "--config", write("# nothing yet\n")});
  EXPECT_EQ(o.workers, 8);
  EXPECT_TRUE(o.leader_elect);
}

TEST_F(OptionsConfigFileTest, ErrorsNameFileLineAndProblem) {
  const std::string p = (dir_ / "config.yaml").string();
  auto expectError = [&](std::string_view yaml, const std::string& want) {
    write(yaml);
    EXPECT_EQ(error({"run", "--config", p}), "config file " + p + ": " + want) << yaml;
  };
  expectError("workers: 2\nleaderElect: true\nfooBar: 1\n", "line 3: unknown key \"fooBar\"");
  expectError("leaderElectionID: x\n",
              "line 1: unknown key \"leaderElectionID\" (did you mean \"leaderElectionId\"?)");
  expectError("metrics-bind-address: :1\n",
              "line 1: unknown key \"metrics-bind-address\" (did you mean "
              "\"metricsBindAddress\"?)");
  expectError("\n\nworkers: x\n", "line 3: workers: \"x\" is not a number");
  expectError("workers: \"3\"\n",
              "line 1: workers: expected a number, got the quoted string \"3\"");
  expectError("workers: [1]\n", "line 1: workers: expected a number, got a list");
  expectError("workers:\n", "line 1: workers: expected a number, got nothing");
  expectError("leaderElect: yes\n",
              "line 1: leaderElect: \"yes\" is not a boolean (true or false)");
  expectError("leaderElect: 'true'\n",
              "line 1: leaderElect: expected true or false, got the quoted string \"true\"");
  expectError("namespaces: monitoring\n",
              "line 1: namespaces: expected a list, got \"monitoring\"");
  expectError("namespaces:\n  - ok\n  - Not_OK\n",
              "line 3: namespaces: \"Not_OK\" is not a valid namespace name (lowercase letters, "
              "digits and '-', at most 63)");
  expectError("kubeconfig: {a: 1}\n", "line 1: kubeconfig: expected a string, got a mapping");
  expectError("leaseDuration: 15\n",
              "line 1: leaseDuration: \"15\" is not a duration: missing unit (use Go syntax such "
              "as 10s, 1m30s or 250ms)");
  expectError("workers: 1\nworkers: 2\n", "line 2: duplicate key \"workers\"");
  expectError("- workers\n", "line 1: expected a mapping of option names to values, got a list");
  expectError("workers: [1\nlogLevel: info\n", "line 2: end of sequence flow not found");
}

TEST_F(OptionsConfigFileTest, UnreadableFile) {
  const std::string missing = (dir_ / "nope.yaml").string();
  EXPECT_EQ(error({"run", "--config", missing}),
            "config file " + missing + ": No such file or directory");
  EXPECT_EQ(error({"run", "--config", dir_.string()}),
            "config file " + dir_.string() + ": is a directory");
}

TEST_F(OptionsConfigFileTest, FlagErrorsComeAfterTheFileIsRead) {
  // The file is applied first, then flags: a bad file is reported even when a flag is bad too,
  // but a flag error is reported when the file is fine.
  const std::string path = write("workers: 3\n");
  EXPECT_EQ(error({"run", "--config", path, "--workers=zero"}),
            "--workers: \"zero\" is not a number");
  EXPECT_EQ(error({"run", "--config", path, "--nope"}), "unknown flag \"--nope\"");
}

}  // namespace
}  // namespace shardscaler::app
