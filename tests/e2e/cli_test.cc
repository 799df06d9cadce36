// The shardscaler binary's command line, end to end: bad flags, bad config files and bad
// kubeconfigs give one clear error line each; `plan` prints the steps of a scale and writes
// nothing; `--log-format=json` writes one JSON object per line.
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

testenv::CommandResult shardscaler(std::vector<std::string> args) {
  args.insert(args.begin(), ShardscalerProcess::binary().string());
  return testenv::runCommand(args, "", 20s);
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::filesystem::path writeFile(const std::string& name, const std::string& content) {
  auto path = testLogDir() / name;
  std::ofstream(path) << content;
  return path;
}

// ---- bad flags and config files: exit 2, nothing on stdout, exactly one line on stderr ----

struct BadCommandLine {
  std::string name;
  std::vector<std::string> args;      // "{config}" is replaced by the file's path
  std::optional<std::string> config;  // written to a file when set
  std::string error;                  // the stderr line, "{config}" replaced
};

void expectOneErrorLine(const testenv::CommandResult& r, const std::string& expected,
                        int exit_code) {
  EXPECT_EQ(r.exit_code, exit_code) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(linesOf(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err, expected + "\n");
}

std::string replaced(std::string s, const std::string& path) {
  for (auto at = s.find("{config}"); at != std::string::npos; at = s.find("{config}")) {
    s.replace(at, 8, path);
  }
  return s;
}

TEST(CliTest, BadFlagsAndConfigFilesGiveOneErrorLineAndExitCode2) {
  const std::vector<BadCommandLine> cases = {
      {"unknown flag", {"run", "--bogus"}, {}, R"(unknown flag "--bogus")"},
      {"misspelt flag",
       {"run", "--workrs=3"},
       {},
       R"(unknown flag "--workrs" (did you mean "--workers"?))"},
      {"bad number", {"run", "--workers=many"}, {}, R"(--workers: "many" is not a number)"},
      {"number out of range",
       {"run", "--workers", "0"},
       {},
       "--workers: must be between 1 and 1024, got 0"},
      {"bad duration",
       {"run", "--lease-duration=15"},
       {},
       R"(--lease-duration: "15" is not a duration: missing unit (use Go syntax such as 10s, 1m30s or 250ms))"},
      {"inconsistent durations",
       {"run", "--lease-duration=5s"},
       {},
       "--lease-duration (5s) must be greater than --renew-deadline (10s)"},
      {"bad log format",
       {"run", "--log-format=xml"},
       {},
       R"(--log-format: "xml" is not one of text, json)"},
      {"bad address",
       {"run", "--metrics-bind-address=localhost"},
       {},
       R"(--metrics-bind-address: "localhost" is not host:port (missing port; e.g. :8080 or 127.0.0.1:0))"},
      {"missing value", {"run", "--kubeconfig"}, {}, "--kubeconfig: missing value (PATH)"},
      {"unknown command",
       {"rnu"},
       {},
       R"(unknown command "rnu" (run, plan, release or version) (did you mean "run"?))"},
      {"plan without --shards",
       {"plan", "--shardset", "ns/main"},
       {},
       "plan: --shards is required"},
      {"plan with a bad --shardset",
       {"plan", "--shardset", "main", "--shards", "2"},
       {},
       R"(--shardset: "main" must be NAMESPACE/NAME)"},
      {"unknown config key",
       {"run", "--config={config}"},
       "workers: 2\nmetricsBindAdress: \":9090\"\n",
       R"(config file {config}: line 2: unknown key "metricsBindAdress" (did you mean "metricsBindAddress"?))"},
      {"config value of the wrong type",
       {"run", "--config={config}"},
       "workers: \"3\"\n",
       R"(config file {config}: line 1: workers: expected a number, got the quoted string "3")"},
      {"bad duration in the config",
       {"run", "--config={config}"},
       "leaseDuration: 15\n",
       R"(config file {config}: line 1: leaseDuration: "15" is not a duration: missing unit (use Go syntax such as 10s, 1m30s or 250ms))"},
      {"malformed config YAML",
       {"run", "--config={config}"},
       "namespaces: [a, b\n",
       "config file {config}: line 2: end of sequence flow not found"},
      {"missing config file",
       {"run", "--config=/nonexistent/shardscaler.yaml"},
       {},
       "config file /nonexistent/shardscaler.yaml: No such file or directory"},
      // The tests run as root, which reads any file whatever its mode: a directory is the
      // unreadable file here.
      {"unreadable config file",
       {"run", "--config={config}"},
       {},
       "config file {config}: is a directory"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE(c.name);
    std::string path;
    if (c.config) {
      path = writeFile("config-" + std::to_string(i) + ".yaml", *c.config).string();
    } else {
      path = (testLogDir() / ("config-dir-" + std::to_string(i))).string();
      std::filesystem::create_directories(path);
    }
    std::vector<std::string> args;
    args.reserve(c.args.size());
    for (const auto& a : c.args) args.push_back(replaced(a, path));
    auto r = shardscaler(args);
    expectOneErrorLine(r, "shardscaler: error: " + replaced(c.error, path), 2);
  }
}

TEST(CliTest, VersionAndHelp) {
  auto version = shardscaler({"version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_THAT(version.out, StartsWith("shardscaler "));
  EXPECT_THAT(version.out, HasSubstr("(commit "));
  EXPECT_EQ(version.err, "");

  auto help = shardscaler({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* flag : {"--kubeconfig", "--namespace", "--config", "--metrics-bind-address",
                           "--health-probe-bind-address", "--leader-elect", "--log-format",
                           "--log-level", "--shutdown-timeout"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
}

// ---- bad kubeconfigs: `run` and `plan` exit 1 with one line naming the problem ----

TEST(CliTest, BadKubeconfigsGiveOneErrorLineAndNoCrash) {
  const auto dir = testLogDir();
  const auto missing_ca = dir / "missing-ca.crt";
  struct BadKubeconfig {
    std::string name;
    std::string content;
    std::string error;
  };
  const std::vector<BadKubeconfig> cases = {
      {"missing context",
       "current-context: prod\nclusters: [{name: k, cluster: {server: https://127.0.0.1:1}}]\n"
       "contexts: [{name: dev, context: {cluster: k}}]\n",
       R"(: context "prod" (its current-context) is not defined; defined: "dev")"},
      {"unreadable CA file",
       "current-context: c\nclusters: [{name: k, cluster: {server: https://127.0.0.1:1, "
       "certificate-authority: " +
           missing_ca.string() + "}}]\ncontexts: [{name: c, context: {cluster: k}}]\n",
       R"( cluster "k": cannot read certificate-authority file ")" + missing_ca.string() +
           R"(": No such file or directory)"},
      {"malformed YAML", "clusters:\n- name: a\n  cluster: {server: [unclosed\n",
       R"( is malformed YAML: end of sequence flow not found (line 4, column 1))"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE(c.name);
    const auto file = writeFile("kubeconfig-" + std::to_string(i), c.content);
    const std::string message = "kubeconfig \"" + file.string() + "\"" + c.error;

    auto run = shardscaler({"run", "--kubeconfig=" + file.string(), "--metrics-bind-address=0",
                            "--health-probe-bind-address=0", "--leader-elect=false"});
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_EQ(run.out, "");
    ASSERT_EQ(linesOf(run.err).size(), 1u) << run.err;
    // A log line: "<time> ERROR <message>".
    EXPECT_THAT(run.err, HasSubstr(" ERROR " + message + "\n")) << run.err;

    auto plan =
        shardscaler({"plan", "--kubeconfig=" + file.string(), "--shardset=ns/main", "--shards=2"});
    expectOneErrorLine(plan, "shardscaler: error: " + message, 1);
  }

  auto run = shardscaler({"run", "--kubeconfig=/nonexistent/kubeconfig", "--leader-elect=false",
                          "--metrics-bind-address=0", "--health-probe-bind-address=0"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  ASSERT_EQ(linesOf(run.err).size(), 1u) << run.err;
  EXPECT_THAT(run.err, HasSubstr("/nonexistent/kubeconfig"));
}

TEST(CliTest, PlanAgainstAServerThatIsDownExits1WithOneLine) {
  const testenv::RefusingPort refusing;  // a server that is down
  const std::string server = refusing.url("https");
  const auto file = writeFile(
      "down.kubeconfig", "current-context: c\nclusters: [{name: k, cluster: {server: '" + server +
                             "', certificate-authority: '" + cluster().caFile().string() +
                             "'}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
                             "users: [{name: u, user: {token: '" +
                             cluster().adminToken() + "'}}]\n");
  const auto started = std::chrono::steady_clock::now();
  auto plan =
      shardscaler({"plan", "--kubeconfig=" + file.string(), "--shardset=ns/main", "--shards=2"});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(plan.exit_code, 1) << plan.err;
  EXPECT_EQ(plan.out, "");
  ASSERT_EQ(linesOf(plan.err).size(), 1u) << plan.err;
  EXPECT_THAT(plan.err, StartsWith("shardscaler: error: Transport: get shardsets"));
  EXPECT_THAT(plan.err, HasSubstr("cannot reach the API server " + server));
  EXPECT_LT(took, 10s);
}

// ---- plan against a real ShardSet ----

class PlanTest : public ShardSetScenario {
 protected:
  // name -> resourceVersion of the target, the ShardSet and every StatefulSet, and the number
  // of Events in the namespace.
  std::map<std::string, std::string> writeState() {
    std::map<std::string, std::string> state;
    state["Prometheus main"] = prometheus()["metadata"].value("resourceVersion", "");
    state["ShardSet main"] = shardSet()["metadata"].value("resourceVersion", "");
    auto list = adminClient().list(k8s::resources::statefulSets(), ns_);
    if (!list) throw std::runtime_error(list.error().describe());
    for (const Json& s : (*list)["items"]) {
      state["StatefulSet " + s["metadata"].value("name", "")] =
          s["metadata"].value("resourceVersion", "");
    }
    auto events = adminClient().list(k8s::resources::events(), ns_);
    if (!events) throw std::runtime_error(events.error().describe());
    state["Events"] = std::to_string((*events)["items"].size());
    return state;
  }

  testenv::CommandResult plan(int shards) {
    return shardscaler({"plan", "--kubeconfig=" + cluster().kubeconfigPath().string(),
                        "--shardset=" + ns_ + "/main", "--shards=" + std::to_string(shards)});
  }
};

TEST_F(PlanTest, PrintsTheStepsOfAScaleAndWritesNothing) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  // Only the plan may act from here: the controller is stopped, and the StatefulSet controller
  // and the emulator have finished with the objects (two reads a second apart agree).
  auto stopped = shardscaler_->terminate(15s);
  ASSERT_TRUE(stopped && WIFEXITED(*stopped) && WEXITSTATUS(*stopped) == 0);
  std::map<std::string, std::string> before;
  ASSERT_TRUE(waitFor("the namespace to be quiet", [&](std::string* seen) {
    before = writeState();
    std::this_thread::sleep_for(1s);
    auto again = writeState();
    *seen = ::testing::PrintToString(again);
    return again == before;
  }));

  auto down = plan(2);
  ASSERT_EQ(down.exit_code, 0) << down.err;
  EXPECT_EQ(down.err, "");
  std::cout << down.out;
  EXPECT_THAT(down.out,
              StartsWith("ShardSet " + ns_ + "/main, scale to 2 (nothing is written):\n"));
  EXPECT_THAT(down.out, HasSubstr("target shards: 4\n"));
  EXPECT_THAT(down.out, HasSubstr("whenScaled: Retain"));
  // Without the shard guard (none is installed here) the plan is the fallback's first round: the
  // pause, then a wait for the operator to acknowledge it before anything is detached.
  EXPECT_THAT(down.out, HasSubstr("\n1. pause Prometheus main\n"));
  EXPECT_THAT(down.out, HasSubstr("\nwaiting for: the operator to acknowledge the pause\n"));
  EXPECT_THAT(down.out, Not(HasSubstr("detach shard")));

  auto up = plan(6);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_THAT(up.out, HasSubstr("\n1. set spec.shards 4 -> 6 on Prometheus main\n"));

  auto same = plan(4);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(same.out, Not(HasSubstr("\n1. ")));

  EXPECT_EQ(writeState(), before) << "plan wrote to the cluster";
  EXPECT_EQ(prometheus()["spec"]["shards"], 4);
  EXPECT_EQ(shardSet()["spec"]["shards"], 4);

  auto missing = shardscaler({"plan", "--kubeconfig=" + cluster().kubeconfigPath().string(),
                              "--shardset=" + ns_ + "/nope", "--shards=2"});
  expectOneErrorLine(missing,
                     "shardscaler: error: NotFound (404): shardsets.shardscaler.io \"nope\" not "
                     "found",
                     1);
}

// ---- log format ----

class JsonLogTest : public ShardSetScenario {
 protected:
  std::vector<std::string> shardscalerArgs() const override {
    // The file sets text, debug and 3 workers; the flag's json wins over the file's text.
    const auto config = testLogDir() / "shardscaler.yaml";
    std::ofstream(config) << "logFormat: text\nlogLevel: debug\nworkers: 3\n";
    return {"--config=" + config.string(), "--log-format=json"};
  }
};

TEST_F(JsonLogTest, EveryLineIsOneJsonObject) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(3, 0));
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 1));
  // A malformed request to the probe port logs a warning with its reason and error.
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(shardscaler_->probePort());
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const std::string junk = "G\"E\\T /readyz\x01 HTTP/1.1\r\n\r\n";
    ASSERT_EQ(write(fd, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
    char buf[512];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
  }
  auto stopped = shardscaler_->terminate(15s);
  ASSERT_TRUE(stopped && WIFEXITED(*stopped) && WEXITSTATUS(*stopped) == 0);

  std::ifstream in(shardscaler_->logFile());
  std::map<std::string, int> levels;
  int lines = 0;
  bool applied = false, detached = false, informer_fields = false, three_workers = false,
       bad_request = false;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    Json j;
    try {
      j = Json::parse(line);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "line " << lines << " is not JSON (" << e.what() << "): " << line;
      continue;
    }
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(j.contains("ts") && j["ts"].is_string()) << line;
    EXPECT_TRUE(j.contains("level") && j["level"].is_string()) << line;
    EXPECT_TRUE(j.contains("msg") && j["msg"].is_string()) << line;
    ++levels[j.value("level", "")];
    const std::string msg = j.value("msg", "");
    // A reconcile's write: its key, reconcile_id and action are fields of their own, not text
    // in msg.
    if (msg == "applied" && j.value("key", "") == ns_ + "/main") {
      applied = true;
      EXPECT_TRUE(j.contains("reconcile_id") && j["reconcile_id"].is_number_unsigned()) << line;
      EXPECT_TRUE(j.contains("action") && j["action"].is_string() &&
                  !j["action"].get<std::string>().empty())
          << line;
      if (j.contains("action") && j["action"].is_string()) {
        detached |= j["action"].get<std::string>().starts_with("detach shard");
      }
    }
    // k8s-client's events reach the JSON log through its sink, numbers as numbers.
    if (msg == "informer replaced") {
      informer_fields = true;
      EXPECT_TRUE(j.contains("size") && j["size"].is_number_unsigned()) << line;
      EXPECT_TRUE(j.contains("resource_version") && j["resource_version"].is_string()) << line;
    }
    three_workers |= msg == "starting workers" && j.value("workers", 0) == 3;
    bad_request |= msg == "HTTP server degraded" &&
                   j.value("reason", "") == "http_request_refused" && j.contains("error");
  }
  std::cout << "[ json log ] " << lines << " lines: " << ::testing::PrintToString(levels) << "\n";
  EXPECT_GT(lines, 10);
  EXPECT_GT(levels["debug"], 0) << "the config file's logLevel: debug was not applied";
  EXPECT_GT(levels["info"], 0);
  EXPECT_TRUE(applied) << "no \"applied\" event with key " << ns_ << "/main";
  EXPECT_TRUE(detached) << "the scale-down's detach is not among the applied actions";
  EXPECT_TRUE(informer_fields) << "no k8s-client \"informer replaced\" event";
  EXPECT_TRUE(three_workers) << "the config file's workers: 3 was not applied";
  EXPECT_TRUE(bad_request) << "no http_request_refused warning with an error field";
}

}  // namespace
}  // namespace shardscaler::e2e
