// The PromQL client against real Prometheus 2.42 processes (Debian's binary) on loopback: the
// sharded topology of the ingestion monitor, result types, API errors, TLS and basic auth.
#include <sys/socket.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shardscaler/promql_client/prometheus_client.h"
#include "shardscaler/test_kit/temp_dir.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "shardscaler/testenv/prometheus_process.h"
#include "shardscaler/testenv/sharded_prometheus.h"

namespace shardscaler::promql {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testenv::PrometheusOptions;
using testenv::PrometheusProcess;
using testenv::RefusingPort;
using testenv::ShardedPrometheus;
using ::testing::HasSubstr;

constexpr int kRateWindowSeconds = 30;
const std::string kNamespace = "monitoring";

std::unique_ptr<PrometheusClient> clientFor(ClientOptions options) {
  auto client = PrometheusClient::create(std::move(options));
  if (!client) throw std::runtime_error(client.error().describe());
  return std::move(*client);
}

std::unique_ptr<PrometheusClient> clientFor(const std::string& url) {
  return clientFor(ClientOptions{.base_url = url});
}

// A server that accepts connections (the kernel does, from the backlog) and never answers.
class SilentServer : public RefusingPort {
 public:
  SilentServer() {
    if (::listen(fd(), 16) != 0) throw std::runtime_error("listen failed");
  }
};

std::map<std::string, double> valuesByLabel(const QueryResult& result, const std::string& label) {
  std::map<std::string, double> out;
  for (const VectorSample& sample : *result.vector()) {
    out[std::string(sample.metric.get(label))] = sample.point.value;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The sharded topology: three shards under different load, one scraper with namespace/pod.

class ShardedTopology : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    topology_ = new ShardedPrometheus({.name = "main", .ns = kNamespace, .shards = 3});
    // Enough scrapes that a rate window of kRateWindowSeconds is fully covered by data.
    topology_->waitForScrapes(kRateWindowSeconds + 5, seconds(180));
  }
  static void TearDownTestSuite() {
    delete topology_;
    topology_ = nullptr;
  }
  static ShardedPrometheus* topology_;
};
ShardedPrometheus* ShardedTopology::topology_ = nullptr;

TEST_F(ShardedTopology, PodsAreNamedLikeTheOperatorsPods) {
  EXPECT_EQ(topology_->podName(0), "prometheus-main-0");
  EXPECT_EQ(topology_->podName(1), "prometheus-main-shard-1-0");
  EXPECT_EQ(topology_->podName(2), "prometheus-main-shard-2-0");
  EXPECT_EQ(topology_->statefulSetName(2), "prometheus-main-shard-2");
  EXPECT_EQ(topology_->podRegex(),
            "prometheus-main-0|prometheus-main-shard-1-0|prometheus-main-shard-2-0");
}

TEST_F(ShardedTopology, PerPodRatesMatchWhatEachShardSaysAboutItself) {
  auto scraper = clientFor(topology_->scraperUrl());
  const std::string window = "[" + std::to_string(kRateWindowSeconds) + "s]";
  // One evaluation time for every query, a little in the past so all scrapes up to it landed.
  const auto at = std::chrono::system_clock::now() - seconds(2);

  auto per_pod = scraper->query(
      {.query = "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace=\"" +
                kNamespace + "\",pod=~\"" + topology_->podRegex() + "\"}" + window + "))",
       .time = at});
  ASSERT_TRUE(per_pod.has_value()) << per_pod.error().describe();
  ASSERT_EQ(per_pod->type(), ResultType::Vector);
  const auto rates = valuesByLabel(*per_pod, "pod");
  ASSERT_EQ(rates.size(), 3u);

  std::vector<double> own_rates;
  for (int shard = 0; shard < topology_->shards(); ++shard) {
    const std::string pod = topology_->podName(shard);
    ASSERT_TRUE(rates.count(pod)) << "no rate for " << pod;
    // Each shard scrapes itself under several jobs; one job's copy of the counter is enough.
    auto own = clientFor(topology_->shard(shard).url())
                   ->query({.query = "sum(rate(prometheus_tsdb_head_samples_appended_total{job="
                                     "\"load-0\"}" +
                                     window + "))",
                            .time = at});
    ASSERT_TRUE(own.has_value()) << own.error().describe();
    ASSERT_EQ(own->vector()->size(), 1u);
    const double own_rate = own->vector()->at(0).point.value;
    own_rates.push_back(own_rate);
    std::cout << pod << ": scraper says " << rates.at(pod) << " samples/s, the shard says "
              << own_rate << " samples/s\n";
    ASSERT_GT(own_rate, 0);
    EXPECT_NEAR(rates.at(pod), own_rate, 0.10 * own_rate) << pod;
  }
  // The load differs per shard (scrape interval 1s, 1/2s, 1/3s), so the rates must too.
  EXPECT_GT(own_rates[1], 1.4 * own_rates[0]);
  EXPECT_GT(own_rates[2], 1.2 * own_rates[1]);
}

TEST_F(ShardedTopology, TheDesignsDefaultQueryRunsAgainstRealData) {
  auto scraper = clientFor(topology_->scraperUrl());
  auto result = scraper->query(
      {.query = "sum by (pod) (rate(prometheus_tsdb_head_samples_appended_total{namespace=\"" +
                kNamespace + "\",pod=~\"" + topology_->podRegex() + "\"}[5m]))",
       .timeout = seconds(10)});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  const auto rates = valuesByLabel(*result, "pod");
  ASSERT_EQ(rates.size(), 3u);
  for (const auto& [pod, rate] : rates) {
    // Before five minutes of data, rate() over [5m] under-reports; it is positive all the same.
    EXPECT_GT(rate, 0) << pod;
    EXPECT_TRUE(std::isfinite(rate)) << pod;
  }
}

TEST_F(ShardedTopology, ReusesOneConnectionForManyQueries) {
  auto scraper = clientFor(topology_->scraperUrl());
  for (int i = 0; i < 50; ++i) {
    auto result = scraper->query({.query = "up{namespace=\"" + kNamespace + "\"}"});
    ASSERT_TRUE(result.has_value()) << result.error().describe();
    ASSERT_EQ(result->vector()->size(), 3u);
  }
  EXPECT_EQ(scraper->stats().requests, 50u);
  EXPECT_EQ(scraper->stats().connections_opened, 1u);
}

TEST_F(ShardedTopology, EmptyResult) {
  auto result = clientFor(topology_->scraperUrl())->query({.query = "up{namespace=\"nowhere\"}"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  ASSERT_EQ(result->type(), ResultType::Vector);
  EXPECT_TRUE(result->vector()->empty());
  EXPECT_TRUE(result->warnings.empty());
}

TEST_F(ShardedTopology, LimitIsIgnoredByServersThatDoNotKnowIt) {
  // Prometheus 2.42 has no `limit` on /api/v1/query and returns every series.
  auto result = clientFor(topology_->scraperUrl())
                    ->query({.query = "up{namespace=\"" + kNamespace + "\"}", .limit = 1});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  EXPECT_EQ(result->vector()->size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// One standalone Prometheus for result types and failures. It remote-reads from a refused port,
// so every query that touches series carries a real warning (fanout storage turns the failing
// remote read into one).

class StandalonePrometheus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    refused_ = new RefusingPort();
    server_ = new PrometheusProcess(PrometheusOptions{
        .name = "standalone",
        .config_yaml =
            "global: {scrape_interval: 1s}\n"
            "scrape_configs:\n- job_name: self\n  static_configs: [{targets: ['@SELF@']}]\n"
            "remote_read:\n- url: " +
            refused_->url() + "/read\n  read_recent: true\n  remote_timeout: 2s\n"});
  }
  static void TearDownTestSuite() {
    delete server_;
    delete refused_;
    server_ = nullptr;
    refused_ = nullptr;
  }
  static RefusingPort* refused_;
  static PrometheusProcess* server_;
};
RefusingPort* StandalonePrometheus::refused_ = nullptr;
PrometheusProcess* StandalonePrometheus::server_ = nullptr;

TEST_F(StandalonePrometheus, ScalarStringAndSpecialValues) {
  auto client = clientFor(server_->url());
  const auto at = std::chrono::system_clock::time_point(milliseconds(1700000000123));

  auto scalar = client->query({.query = "1.5", .time = at});
  ASSERT_TRUE(scalar.has_value()) << scalar.error().describe();
  ASSERT_EQ(scalar->type(), ResultType::Scalar);
  EXPECT_EQ(scalar->scalar()->point.value, 1.5);
  EXPECT_EQ(scalar->scalar()->point.timestamp, Timestamp(milliseconds(1700000000123)));

  auto text = client->query({.query = "\"hello\"", .time = at});
  ASSERT_TRUE(text.has_value()) << text.error().describe();
  ASSERT_EQ(text->type(), ResultType::String);
  EXPECT_EQ(text->string()->value, "hello");

  auto nan = client->query({.query = "0/0"});
  ASSERT_TRUE(nan.has_value()) << nan.error().describe();
  EXPECT_TRUE(std::isnan(nan->scalar()->point.value));
  auto inf = client->query({.query = "1/0"});
  ASSERT_TRUE(inf.has_value()) << inf.error().describe();
  EXPECT_EQ(inf->scalar()->point.value, INFINITY);
  auto minus_inf = client->query({.query = "vector(-1/0)"});
  ASSERT_TRUE(minus_inf.has_value()) << minus_inf.error().describe();
  ASSERT_EQ(minus_inf->type(), ResultType::Vector);
  EXPECT_EQ(minus_inf->vector()->at(0).point.value, -INFINITY);
}

TEST_F(StandalonePrometheus, MalformedQueryIsBadData) {
  auto client = clientFor(server_->url());
  auto result = client->query({.query = "sum(rate(x[5m])"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::BadData);
  EXPECT_EQ(result.error().http_status, 400);
  EXPECT_EQ(result.error().error_type, "bad_data");
  EXPECT_THAT(result.error().message, HasSubstr("parse error"));
  EXPECT_THAT(result.error().message, HasSubstr(server_->url() + "/api/v1/query"));
  EXPECT_THAT(result.error().message, HasSubstr("\"sum(rate(x[5m])\""));
}

TEST_F(StandalonePrometheus, ManyToManyMatchIsAnExecutionError) {
  auto client = clientFor(server_->url());
  // The right side has two series in the one match group on(): no data is needed for that.
  auto result = client->query({.query = "vector(1) + on() "
                                        "(label_replace(vector(1), \"a\", \"y\", \"\", \"\") or "
                                        "label_replace(vector(1), \"a\", \"z\", \"\", \"\"))"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Execution) << result.error().describe();
  EXPECT_EQ(result.error().http_status, 422);
}

TEST_F(StandalonePrometheus, RealWarningsFromAFailingRemoteRead) {
  auto client = clientFor(server_->url());
  auto result = client->query({.query = "up"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  ASSERT_FALSE(result->warnings.empty());
  EXPECT_THAT(result->warnings[0], HasSubstr("/read"));
}

TEST_F(StandalonePrometheus, UnknownPathIsAnHttpError) {
  auto client = clientFor(server_->url() + "/no/such/prefix");
  auto result = client->query({.query = "up"});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::Http);
  EXPECT_EQ(result.error().http_status, 404);
}

TEST(PromqlClientFailures, PrometheusDownIsATransportErrorAndRecoveryReusesTheClient) {
  PrometheusProcess server(PrometheusOptions{.name = "restarting"});
  auto client = clientFor(server.url());
  ASSERT_TRUE(client->query({.query = "1"}).has_value());

  server.stop();
  auto down = client->query({.query = "up"});
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().kind, ErrorKind::Transport);
  EXPECT_THAT(down.error().message, HasSubstr(server.url()));

  server.restart();
  auto again = client->query({.query = "1"});
  ASSERT_TRUE(again.has_value()) << again.error().describe();
}

TEST(PromqlClientFailures, SlowServerHitsTheClientTimeout) {
  SilentServer silent;
  auto client = clientFor(ClientOptions{.base_url = silent.url(), .timeout = milliseconds(500)});
  const auto started = std::chrono::steady_clock::now();
  auto result = client->query({.query = "up"});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, ErrorKind::ClientTimeout);
  EXPECT_GE(elapsed, milliseconds(450));  // libcurl's timer may fire a hair early
  EXPECT_LT(elapsed, seconds(10));
}

// ---------------------------------------------------------------------------------------------
// TLS and basic auth, served by Prometheus's own web config.

constexpr const char* kUser = "shardscaler";
constexpr const char* kPassword = "shardscaler-test";
// bcrypt (cost 10) of kPassword; Prometheus's web config only takes hashes.
constexpr const char* kPasswordHash =
    "$2b$10$I8zsEu5ryhSUNE9fcNBvuulqNlVMFFdg59rsepRwMvXQs5UE6..RS";

TEST(PromqlClientTls, CaFileAndBasicAuthAgainstATlsPrometheus) {
  // Declared before the server, so it outlives the Prometheus that reads its files.
  test_kit::TempDir dir("shardscaler-promql-tls-");
  const std::string cert = (dir.path() / "cert.pem").string();
  const std::string key = (dir.path() / "key.pem").string();
  const std::string openssl =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >" + (dir.path() / "openssl.log").string() + " 2>&1";
  if (std::system(openssl.c_str()) != 0) {
    dir.keep();  // for the log the message names
    FAIL() << "openssl failed: see " << dir.path() / "openssl.log";
  }

  PrometheusProcess server(PrometheusOptions{
      .name = "tls",
      .web_config_yaml = "tls_server_config:\n  cert_file: " + cert + "\n  key_file: " + key +
                         "\nbasic_auth_users:\n  " + kUser + ": '" + kPasswordHash + "'\n",
      .https = true,
      .probe_basic_auth = std::make_pair(std::string(kUser), std::string(kPassword))});
  ASSERT_THAT(server.url(), ::testing::StartsWith("https://"));

  auto good = clientFor(ClientOptions{
      .base_url = server.url(), .basic_auth = BasicAuth{kUser, kPassword}, .ca_file = cert});
  auto result = good->query({.query = "1"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  EXPECT_EQ(result->scalar()->point.value, 1.0);

  auto wrong_password = clientFor(ClientOptions{
      .base_url = server.url(), .basic_auth = BasicAuth{kUser, "wrong"}, .ca_file = cert});
  auto unauthorized = wrong_password->query({.query = "1"});
  ASSERT_FALSE(unauthorized.has_value());
  EXPECT_EQ(unauthorized.error().kind, ErrorKind::Http);
  EXPECT_EQ(unauthorized.error().http_status, 401);

  auto no_ca = clientFor(ClientOptions{
      .base_url = server.url(), .basic_auth = BasicAuth{kUser, kPassword}, .ca_file = "/dev/null"});
  auto untrusted = no_ca->query({.query = "1"});
  ASSERT_FALSE(untrusted.has_value());
  EXPECT_EQ(untrusted.error().kind, ErrorKind::Transport);
  EXPECT_THAT(untrusted.error().message, HasSubstr(server.url()));
}

// ---------------------------------------------------------------------------------------------
// PrometheusAgent shards: named prom-agent-..., scraped like servers.

TEST(AgentTopology, AgentShardsAreNamedAndScrapedLikeTheOperatorsAgents) {
  ShardedPrometheus agents({.name = "edge", .ns = kNamespace, .shards = 2, .agent = true});
  EXPECT_EQ(agents.podName(1), "prom-agent-edge-shard-1-0");
  agents.waitForScrapes(2, seconds(60));
  auto result = clientFor(agents.scraperUrl())
                    ->query({.query = "up{namespace=\"" + kNamespace + "\",pod=~\"" +
                                      agents.podRegex() + "\"} == 1"});
  ASSERT_TRUE(result.has_value()) << result.error().describe();
  const auto up = valuesByLabel(*result, "pod");
  EXPECT_EQ(up.size(), 2u);
  EXPECT_TRUE(up.count("prom-agent-edge-0"));
  EXPECT_TRUE(up.count("prom-agent-edge-shard-1-0"));
  // An agent has no query API: the client reports what the agent says.
  auto direct = clientFor(agents.shard(0).url())->query({.query = "up"});
  ASSERT_FALSE(direct.has_value());
  EXPECT_THAT(direct.error().message, HasSubstr("Agent"));
}

}  // namespace
}  // namespace shardscaler::promql
