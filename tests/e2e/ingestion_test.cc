// docs/design/ingestion.md end to end: real Prometheus shards (named like the operator's pods)
// under load, one Prometheus scraping them with namespace/pod labels, and shardscaler reporting
// each shard's ingestion rate and a recommendation in the ShardSet's status, `kubectl get
// shardsets` and /metrics. Failures (Prometheus down, silent, a malformed query, an empty result,
// a URL outside the allow-list) are conditions and Events, never a crash and never a scale change.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/promql_client/prometheus_client.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

// A short rate window (the default query's [5m] under-reports until five minutes of data
// exist) over a 1 s scrape interval.
constexpr int kWindowSeconds = 20;
constexpr int64_t kTargetSamplesPerShard = 1000;
constexpr int kMaxShards = 50;

std::string rateQuery(const std::string& extra_matchers = "") {
  return "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace=\"$NAMESPACE\","
         "pod=~\"$POD_REGEX\"" +
         extra_matchers + "}[" + std::to_string(kWindowSeconds) + "s]))";
}

// Listens on 127.0.0.1, accepts every connection and never answers: a Prometheus that hangs.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          held_.push_back(c);
          ++accepted_;
        }
      }
    });
  }
  ~SilentServer() {
    stop_ = true;
    acceptor_.join();
    for (int c : held_) ::close(c);
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint16_t port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::vector<int> held_;  // acceptor thread only
  std::thread acceptor_;
};

class IngestionTest : public ShardSetScenario {
 protected:
  void applyShardSetWithIngestion(const std::string& url, const std::string& query,
                                  const std::string& interval) {
    std::string yaml = shardSetYaml(ns_, "main", {.shards = 3, .max_shards = kMaxShards});
    yaml += "  ingestion:\n    prometheusURL: \"" + url + "\"\n    interval: \"" + interval +
            "\"\n    targetSamplesPerShard: " + std::to_string(kTargetSamplesPerShard) + "\n";
    // A single-quoted YAML scalar keeps the PromQL's double quotes and `$` as written.
    if (!query.empty()) yaml += "    query: '" + query + "'\n";
    apply(yaml);
  }

  void setQuery(const std::string& query) {
    Json patch = {{"spec", {{"ingestion", {{"query", query}}}}}};
    auto r = adminClient().patch(kShardSets, ns_, "main", k8s::PatchType::Merge, patch);
    ASSERT_TRUE(r.has_value()) << r.error().describe();
  }

  // Waits for IngestionAvailable with this status (and reason, when given).
  ::testing::AssertionResult waitForIngestion(const std::string& status,
                                              const std::string& reason = "") {
    return waitFor("IngestionAvailable=" + status + (reason.empty() ? "" : "/" + reason),
                   [&](std::string* seen) {
                     auto c = condition("IngestionAvailable");
                     Json ss = shardSet();
                     *seen = (c ? c->dump() : "no condition") +
                             " ingestion=" + ss["status"].value("ingestion", Json()).dump();
                     return c && c->value("status", "") == status &&
                            (reason.empty() || c->value("reason", "") == reason);
                   });
  }

  bool hasEvent(const std::string& prefix) const {
    for (const auto& e : shardSetEvents()) {
      if (e.starts_with(prefix)) return true;
    }
    return false;
  }

  // A failed ingestion query reports itself and changes no shard count.
  void expectReportedWithoutScaling(const std::string& reason, const std::set<std::string>& uids) {
    Json ss = shardSet();
    const Json& status = ss["status"];
    EXPECT_FALSE(status.contains("recommendedShards")) << status.dump();
    EXPECT_NE(status["ingestion"].value("error", ""), "") << status.dump();
    EXPECT_EQ(status["ingestion"].value("perShard", Json::array()), Json::array());
    auto c = condition("IngestionAvailable");
    ASSERT_TRUE(c);
    EXPECT_EQ((*c)["message"], status["ingestion"]["error"]);
    // Ready/Degraded belong to the planner: a query failure does not degrade the scaling.
    auto degraded = condition("Degraded");
    ASSERT_TRUE(degraded);
    EXPECT_EQ((*degraded)["status"], "False") << degraded->dump();
    EXPECT_TRUE(test_kit::eventually(30s, kPoll,
                                     [&](std::string* seen) {
                                       auto events = shardSetEvents();
                                       *seen = ::testing::PrintToString(events);
                                       return hasEvent("IngestionUnavailable: " + reason + ": ");
                                     }))
        << "no IngestionUnavailable Event for " << reason;
    EXPECT_EQ(ss["spec"]["shards"], 3);
    EXPECT_EQ(prometheus()["spec"]["shards"], 3);
    EXPECT_EQ(prometheus()["spec"].value("paused", false), false);
    EXPECT_EQ(statefulSetUids(), uids) << "a StatefulSet was deleted or replaced";
    EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
    EXPECT_TRUE(shardscaler_->running()) << "shardscaler died";
  }

  // `promtool check metrics` on the running shardscaler's /metrics: exit 0, no remarks.
  void expectPromtoolAccepts(const std::string& exposition) {
    const auto file = testLogDir() / "metrics.txt";
    std::ofstream(file) << exposition;
    const std::string command = "promtool check metrics < " + file.string() + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
    const int status = ::pclose(pipe);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << output;
    EXPECT_EQ(output, "") << "promtool had remarks";
  }
};

double ownRate(testenv::ShardedPrometheus& prom, int shard,
               std::chrono::system_clock::time_point at) {
  auto client = promql::PrometheusClient::create({.base_url = prom.shard(shard).url()});
  if (!client) throw std::runtime_error(client.error().describe());
  // Each shard scrapes itself under several jobs; one job's copy of the counter is enough.
  auto r = (*client)->query(
      {.query = "sum(rate(prometheus_tsdb_head_samples_appended_total{job=\"load-0\"}[" +
                std::to_string(kWindowSeconds) + "s]))",
       .time = at});
  if (!r) throw std::runtime_error(r.error().describe());
  if (r->vector() == nullptr || r->vector()->size() != 1) {
    throw std::runtime_error("shard " + std::to_string(shard) + " has no rate of its own");
  }
  return r->vector()->at(0).point.value;
}

// `kubectl get shardsets` as a table: column name -> value, for the row `name`.
std::map<std::string, std::string> printedRow(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  std::string header_line, line;
  std::getline(lines, header_line);
  auto split = [](const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  const auto header = split(header_line);
  while (std::getline(lines, line)) {
    auto cells = split(line);
    if (cells.empty() || cells[0] != name) continue;
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    return row;
  }
  return {};
}

TEST_F(IngestionTest, RatesOfRealShardsAreReportedAndFailuresNeverScale) {
  createPrometheus(3);
  testenv::ShardedPrometheus prom({.name = "main",
                                   .ns = ns_,
                                   .shards = 3,
                                   .scrape_interval = 1000ms,
                                   .work_dir = testLogDir() / "prometheus"});
  prom.waitForScrapes(kWindowSeconds + 5, 180s);
  applyShardSetWithIngestion(prom.scraperUrl(), rateQuery(), "2s");
  ASSERT_TRUE(waitForSettled(3, 0));
  const auto uids = statefulSetUids();

  ASSERT_TRUE(waitForIngestion("True", "RatesAvailable"));
  ASSERT_TRUE(waitFor("rates of 3 shards", [&](std::string* seen) {
    Json ingestion = shardSet()["status"].value("ingestion", Json::object());
    *seen = ingestion.dump();
    return ingestion.value("perShard", Json::array()).size() == 3 &&
           ingestion.value("error", "x").empty();
  }));

  // Each shard's rate as shardscaler reports it, against what the shard says about itself at
  // the time of shardscaler's query.
  {
    Json ss = shardSet();
    const Json& ingestion = ss["status"]["ingestion"];
    auto at = k8s::parseRfc3339(ingestion["lastUpdate"].get<std::string>());
    ASSERT_TRUE(at.has_value()) << ingestion.dump();
    const auto when = std::chrono::system_clock::time_point(at->seconds);
    double total = 0;
    for (int shard = 0; shard < 3; ++shard) {
      const Json& entry = ingestion["perShard"][shard];
      ASSERT_EQ(entry["index"], shard) << ingestion.dump();
      const double reported = entry["samplesPerSecond"].get<double>();
      const double own = ownRate(prom, shard, when);
      std::cout << "shard " << shard << ": shardscaler reports " << reported
                << " samples/s, the shard's own API says " << own << " samples/s ("
                << 100 * (reported - own) / own << "%)\n";
      ASSERT_GT(own, 0);
      EXPECT_NEAR(reported, own, 0.10 * own) << "shard " << shard;
      total += reported;
    }
    EXPECT_NEAR(ingestion["totalSamplesPerSecond"].get<double>(), total, 1e-6 * total);
    const int expected =
        std::clamp(static_cast<int>(std::ceil(total / static_cast<double>(kTargetSamplesPerShard))),
                   1, kMaxShards);
    EXPECT_EQ(ss["status"]["recommendedShards"], expected) << ss["status"].dump();
  }

  // kubectl get shardsets prints the rate and the recommendation.
  {
    auto got = kubectl("get shardsets -n " + ns_);
    ASSERT_EQ(got.exit_code, 0) << got.err;
    std::cout << got.out;
    auto row = printedRow(got.out, "main");
    ASSERT_TRUE(row.contains("SAMPLES/S") && row.contains("RECOMMENDED")) << got.out;
    const double printed_rate = std::stod(row["SAMPLES/S"]);
    EXPECT_GT(printed_rate, 0) << got.out;
    const int printed_recommended = std::stoi(row["RECOMMENDED"]);
    // One object, one status: the printed recommendation is the printed rate's.
    EXPECT_EQ(printed_recommended,
              std::clamp(static_cast<int>(std::ceil(printed_rate / kTargetSamplesPerShard)), 1,
                         kMaxShards))
        << got.out;
    EXPECT_EQ(row["DESIRED"], "3");
    EXPECT_EQ(row["ACTIVE"], "3");
    // The recommendation is reported, never applied.
    EXPECT_EQ(prometheus()["spec"]["shards"], 3);
  }

  // /metrics: the rates and the recommendation, in a format promtool accepts.
  {
    auto [code, body] = shardscaler_->httpGet(shardscaler_->metricsPort(), "/metrics");
    ASSERT_EQ(code, 200);
    const std::string labels = "namespace=\"" + ns_ + "\",shard=\"2\",shardset=\"main\"} ";
    EXPECT_NE(body.find("shardscaler_shard_ingestion_samples_per_second{" + labels),
              std::string::npos)
        << body;
    EXPECT_NE(body.find("shardscaler_ingestion_samples_per_second{namespace=\"" + ns_),
              std::string::npos);
    EXPECT_NE(body.find("shardscaler_recommended_shards{namespace=\"" + ns_), std::string::npos);
    EXPECT_EQ(body.find("shardscaler_promql_queries_total 0\n"), std::string::npos);
    EXPECT_NE(body.find("shardscaler_promql_queries_total "), std::string::npos);
    expectPromtoolAccepts(body);
  }

  // A malformed override query.
  setQuery(
      "sum by (pod) "
      "(rate(prometheus_tsdb_head_samples_appended_total{namespace=\"$NAMESPACE\"}[20s]");
  ASSERT_TRUE(waitForIngestion("False", "InvalidQuery"));
  expectReportedWithoutScaling("InvalidQuery", uids);
  EXPECT_NE(condition("IngestionAvailable")->value("message", "").find("bad_data"),
            std::string::npos);

  // A query that selects nothing.
  setQuery(rateQuery(",job=\"no-such-job\""));
  ASSERT_TRUE(waitForIngestion("False", "EmptyResult"));
  expectReportedWithoutScaling("EmptyResult", uids);

  // Back to a good query: rates again, and an Event saying so.
  setQuery(rateQuery());
  ASSERT_TRUE(waitForIngestion("True", "RatesAvailable"));
  EXPECT_TRUE(test_kit::eventually(30s, kPoll,
                                   [&](std::string*) { return hasEvent("IngestionRecovered: "); }));

  // Prometheus down.
  prom.scraper().stop();
  ASSERT_TRUE(waitForIngestion("False", "PrometheusUnreachable"));
  expectReportedWithoutScaling("PrometheusUnreachable", uids);
  {
    // The failures were counted, and the rate series are gone rather than stale.
    auto [code, body] = shardscaler_->httpGet(shardscaler_->metricsPort(), "/metrics");
    ASSERT_EQ(code, 200);
    EXPECT_NE(body.find("shardscaler_promql_query_errors_total{kind=\"transport\"}"),
              std::string::npos);
    EXPECT_NE(body.find("shardscaler_promql_query_errors_total{kind=\"bad_data\"}"),
              std::string::npos);
    EXPECT_EQ(body.find("shardscaler_shard_ingestion_samples_per_second{namespace=\"" + ns_),
              std::string::npos);
    expectPromtoolAccepts(body);
  }
  prom.scraper().restart();
  ASSERT_TRUE(waitForIngestion("True", "RatesAvailable"));
  EXPECT_EQ(statefulSetUids(), uids);
  EXPECT_EQ(prometheus()["spec"]["shards"], 3);
}

TEST_F(IngestionTest, APrometheusThatNeverAnswersIsAQueryTimeout) {
  createPrometheus(3);
  SilentServer silent;
  // interval 2s: each query gets min(interval, 10s) = 2 s.
  applyShardSetWithIngestion(silent.url(), "", "2s");
  ASSERT_TRUE(waitForSettled(3, 0));
  const auto uids = statefulSetUids();
  ASSERT_TRUE(waitForIngestion("False", "QueryTimeout"));
  expectReportedWithoutScaling("QueryTimeout", uids);
  EXPECT_GE(silent.accepted(), 1);
  EXPECT_NE(condition("IngestionAvailable")->value("message", "").find("within 2000ms"),
            std::string::npos)
      << condition("IngestionAvailable")->dump();
  // Still answering the scale subresource while every query hangs.
  scaleWithKubectl(2);
  ASSERT_TRUE(waitFor("scale-down to 2 while queries time out", [&](std::string* seen) {
    Json target = prometheus();
    *seen = target["spec"].dump();
    return target["spec"].value("shards", -1) == 2;
  }));
}

// spec.ingestion.prometheusURL is whoever created the ShardSet's: the real binary never sends a
// request to a URL outside --prometheus-url-allow (the harness allows 127.0.0.1 only, so
// "localhost" is outside), nor to one carrying a query, and says so in the condition and an
// Event without touching the shard count.
TEST_F(IngestionTest, AUrlOutsideTheAllowListOrWithAQueryIsNeverQueried) {
  createPrometheus(3);
  SilentServer silent;
  applyShardSetWithIngestion("http://localhost:" + std::to_string(silent.port()), "", "2s");
  ASSERT_TRUE(waitForSettled(3, 0));
  const auto uids = statefulSetUids();
  ASSERT_TRUE(waitForIngestion("False", "PrometheusURLNotAllowed"));
  expectReportedWithoutScaling("PrometheusURLNotAllowed", uids);
  EXPECT_NE(condition("IngestionAvailable")->value("message", "").find("--prometheus-url-allow"),
            std::string::npos)
      << condition("IngestionAvailable")->dump();

  applyShardSetWithIngestion(silent.url() + "/?match[]=up", "", "2s");
  ASSERT_TRUE(waitForIngestion("False", "InvalidPrometheusURL"));
  EXPECT_NE(condition("IngestionAvailable")->value("message", "").find("must not have a query"),
            std::string::npos)
      << condition("IngestionAvailable")->dump();
  // Each URL was judged at least once by now; not one connection was made.
  EXPECT_EQ(silent.accepted(), 0);
}

}  // namespace
}  // namespace shardscaler::e2e
