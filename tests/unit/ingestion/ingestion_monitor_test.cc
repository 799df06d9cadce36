// The ingestion monitor on a ManualClock with a scripted PromQuery: first query at once, then
// every interval; snapshots, metrics and notifications; failures; retargeting and untracking
// while a query is in flight; one client per Prometheus URL.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/ingestion/ingestion_query.h"
#include "shardscaler/ingestion/ingestion_result.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"

namespace shardscaler::ingestion {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kRealTimeout = 10s;  // bounds every real-time wait of the test itself

promql::QueryResult vectorOf(const std::vector<std::pair<std::string, double>>& pods) {
  promql::Vector v;
  for (const auto& [pod, value] : pods) v.push_back({promql::Labels{{"pod", pod}}, {{}, value}});
  return promql::QueryResult{.data = std::move(v)};
}

// Answers queries from a script (the last answer repeats); can hold a query until released.
class ScriptedPromQuery final : public promql::PromQuery {
 public:
  void answer(promql::Result<promql::QueryResult> r) {
    std::lock_guard lock(mutex_);
    answers_.push_back(std::move(r));
  }
  void holdNext() {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  bool awaitHeld() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kRealTimeout, [&] { return held_; });
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
    }
    cv_.notify_all();
  }
  std::vector<promql::InstantQuery> queries() const {
    std::lock_guard lock(mutex_);
    return queries_;
  }

  promql::Result<promql::QueryResult> query(const promql::InstantQuery& q) override {
    std::unique_lock lock(mutex_);
    queries_.push_back(q);
    if (hold_) {
      held_ = true;
      cv_.notify_all();
      cv_.wait_for(lock, kRealTimeout, [&] { return !hold_; });
      held_ = false;
    }
    if (answers_.empty())
      return std::unexpected(promql::makeError(promql::ErrorKind::Internal, "no answer scripted"));
    auto r = answers_.front();
    if (answers_.size() > 1) answers_.pop_front();
    return r;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<promql::Result<promql::QueryResult>> answers_;
  std::vector<promql::InstantQuery> queries_;
  bool hold_ = false;
  bool held_ = false;
};

// Keys the monitor notified, in order.
class Notifications {
 public:
  void add(const std::string& key) {
    {
      std::lock_guard lock(mutex_);
      keys_.push_back(key);
    }
    cv_.notify_all();
  }
  bool awaitCount(size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kRealTimeout, [&] { return keys_.size() >= n; });
  }
  std::vector<std::string> keys() const {
    std::lock_guard lock(mutex_);
    return keys_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> keys_;
};

IngestionTarget target(std::string name = "main", std::string url = "http://prom:9090") {
  IngestionTarget t;
  t.ns = "monitoring";
  t.shard_set = name;
  t.kind = planner::TargetKind::Prometheus;
  t.target_name = std::move(name);
  t.prometheus_url = std::move(url);
  t.interval = 30s;
  t.target_samples_per_shard = 500;
  return t;
}

class IngestionMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override { makeMonitor(); }
  void TearDown() override {
    prom_->release();
    if (monitor_) monitor_->stop();
  }

  // Every URL the tests name is allowed unless a test says otherwise.
  static PrometheusUrlPolicy anyHttpUrl() { return *PrometheusUrlPolicy::make({"http://*:*"}, ""); }

  void makeMonitor(int workers = 2, PrometheusUrlPolicy url_policy = anyHttpUrl()) {
    monitor_.reset();
    IngestionMonitorOptions options;
    options.workers = workers;
    options.jitter = 0;
    options.url_policy = std::move(url_policy);
    options.client_factory = [this](const std::string& url, std::chrono::milliseconds timeout)
        -> promql::Result<std::shared_ptr<promql::PromQuery>> {
      std::lock_guard lock(mutex_);
      clients_made_.push_back(url + " " + std::to_string(timeout.count()) + "ms");
      if (url.starts_with("ftp:")) {
        return std::unexpected(promql::makeError(promql::ErrorKind::Config, "not http(s): " + url));
      }
      return std::shared_ptr<promql::PromQuery>(prom_);
    };
    monitor_ = std::make_unique<IngestionMonitor>(
        clock_, &metrics_, [this](const std::string& key) { notified_.add(key); }, options);
    monitor_->start();
  }

  // How long until the next query (nullopt: none is scheduled).
  std::optional<std::chrono::nanoseconds> nextQueryIn() {
    auto next = monitor_->nextQueryAt();
    if (!next) return std::nullopt;
    return *next - clock_.monotonicNow();
  }

  std::vector<std::string> clientsMade() {
    std::lock_guard lock(mutex_);
    return clients_made_;
  }

  k8s::ManualClock clock_;
  telemetry::Metrics metrics_;
  std::shared_ptr<ScriptedPromQuery> prom_ = std::make_shared<ScriptedPromQuery>();
  Notifications notified_;
  std::unique_ptr<IngestionMonitor> monitor_;
  std::mutex mutex_;
  std::vector<std::string> clients_made_;
};

TEST_F(IngestionMonitorTest, FirstQueryRunsAtOnceAndTheSnapshotHasAveragedRates) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100},
                          {"prometheus-main-1", 140},
                          {"prometheus-main-shard-1-0", 400},
                          {"prometheus-other-0", 9999}}));
  monitor_->track("monitoring/main", target());
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_EQ(notified_.keys(), std::vector<std::string>{"monitoring/main"});

  auto s = monitor_->snapshot("monitoring/main");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->error, "");
  EXPECT_EQ(s->per_shard, (std::vector<ShardRate>{{0, 120}, {1, 400}}));
  EXPECT_EQ(s->total_samples_per_second, 520);
  EXPECT_EQ(s->recommended_shards, 2);  // ceil(520 / 500)
  EXPECT_FALSE(s->last_update.empty());

  auto queries = prom_->queries();
  ASSERT_EQ(queries.size(), 1u);
  EXPECT_EQ(queries[0].query, ingestionQuery(target()));
  EXPECT_EQ(queries[0].timeout, 10s);  // min(interval 30s, 10s)
  EXPECT_EQ(clientsMade(), std::vector<std::string>{"http://prom:9090 10000ms"});

  const std::string text = metrics_.serialize();
  EXPECT_THAT(text, HasSubstr("shardscaler_shard_ingestion_samples_per_second{namespace="
                              "\"monitoring\",shard=\"0\",shardset=\"main\"} 120"));
  EXPECT_THAT(text, HasSubstr("shardscaler_ingestion_samples_per_second{namespace=\"monitoring\","
                              "shardset=\"main\"} 520"));
  EXPECT_THAT(text, HasSubstr("shardscaler_recommended_shards{namespace=\"monitoring\","
                              "shardset=\"main\"} 2"));
  EXPECT_THAT(text, HasSubstr("shardscaler_promql_queries_total 1"));
}

// Found by the demo: a shard above the target's count (retained, or whose pod outlives its
// StatefulSet) was counted in the total and the recommendation, which the external metric does
// not count, so recommendedShards and the HPA's count disagreed.
TEST_F(IngestionMonitorTest, OnlyShardsBelowTheTargetsCountAreCounted) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100},
                          {"prometheus-main-shard-1-0", 400},
                          {"prometheus-main-shard-2-0", 700},
                          {"prometheus-main-shard-3-0", 900}}));
  IngestionTarget t = target();
  t.active_shards = 2;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));

  auto s = monitor_->snapshot("monitoring/main");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->per_shard, (std::vector<ShardRate>{{0, 100}, {1, 400}, {2, 700}, {3, 900}}));
  EXPECT_EQ(s->total_samples_per_second, 500);
  EXPECT_EQ(s->recommended_shards, 1);  // ceil(500 / 500), not ceil(2100 / 500)
}

TEST_F(IngestionMonitorTest, QueriesAgainEveryInterval) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  auto t = target();
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_EQ(nextQueryIn(), 5s);
  EXPECT_EQ(prom_->queries().size(), 1u);
  EXPECT_EQ(prom_->queries()[0].timeout, 5s);  // min(interval, 10s)

  clock_.advance(5s - 1ms);
  EXPECT_EQ(nextQueryIn(), 1ms);
  EXPECT_EQ(prom_->queries().size(), 1u);
  clock_.advance(1ms);
  ASSERT_TRUE(notified_.awaitCount(2));
  EXPECT_EQ(prom_->queries().size(), 2u);
  EXPECT_EQ(nextQueryIn(), 5s);

  // Tracking the same target again changes nothing.
  monitor_->track("monitoring/main", t);
  EXPECT_EQ(nextQueryIn(), 5s);
  EXPECT_EQ(prom_->queries().size(), 2u);
}

TEST_F(IngestionMonitorTest, JitterDelaysTheNextQueryByAtMostItsShare) {
  monitor_->stop();
  IngestionMonitorOptions options;
  options.workers = 2;
  options.jitter = 0.1;
  options.client_factory = [this](const std::string&, std::chrono::milliseconds)
      -> promql::Result<std::shared_ptr<promql::PromQuery>> { return prom_; };
  options.url_policy = anyHttpUrl();
  monitor_ = std::make_unique<IngestionMonitor>(
      clock_, nullptr, [this](const std::string& key) { notified_.add(key); }, options);
  monitor_->start();
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  monitor_->track("monitoring/main", target());
  ASSERT_TRUE(notified_.awaitCount(1));
  auto next = nextQueryIn();
  ASSERT_TRUE(next.has_value());
  EXPECT_GE(*next, 30s);
  EXPECT_LT(*next, 33s);
}

TEST_F(IngestionMonitorTest, AFailedQueryReportsItsReasonAndDropsTheRateSeries) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}, {"prometheus-main-shard-1-0", 200}}));
  prom_->answer(std::unexpected(
      promql::makeError(promql::ErrorKind::Transport, "http://prom:9090: connection refused")));
  auto t = target();
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_THAT(metrics_.serialize(), HasSubstr("shardscaler_ingestion_samples_per_second{"));

  clock_.advance(5s);
  ASSERT_TRUE(notified_.awaitCount(2));
  auto s = monitor_->snapshot("monitoring/main");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->error_reason, kReasonPrometheusUnreachable);
  EXPECT_THAT(s->error, HasSubstr("connection refused"));
  EXPECT_TRUE(s->per_shard.empty());
  EXPECT_EQ(s->total_samples_per_second, 0);
  EXPECT_EQ(s->recommended_shards, std::nullopt);

  const std::string text = metrics_.serialize();
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_ingestion_samples_per_second{")));
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_shard_ingestion_samples_per_second{")));
  EXPECT_THAT(text, HasSubstr("shardscaler_promql_query_errors_total{kind=\"transport\"} 1"));
  EXPECT_THAT(text, HasSubstr("shardscaler_degraded_events_total{reason=\"ingestion_prometheus_"
                              "unreachable\"} 1"));
  // Failing keeps the cadence: no retry storm.
  EXPECT_EQ(nextQueryIn(), 5s);
}

TEST_F(IngestionMonitorTest, EmptyAndForeignResultsAreFailuresToo) {
  prom_->answer(vectorOf({}));
  prom_->answer(vectorOf({{"prometheus-other-0", 5}}));
  auto t = target();
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error_reason, kReasonEmptyResult);
  clock_.advance(5s);
  ASSERT_TRUE(notified_.awaitCount(2));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error_reason, kReasonNoShardSeries);
  // An answered query is not a failed query; the degraded path is counted.
  const std::string text = metrics_.serialize();
  EXPECT_THAT(text, Not(HasSubstr("shardscaler_promql_query_errors_total{")));
  EXPECT_THAT(text, HasSubstr("reason=\"ingestion_empty_result\"} 1"));
  EXPECT_THAT(text, HasSubstr("reason=\"ingestion_no_shard_series\"} 1"));
}

TEST_F(IngestionMonitorTest, AShardThatDisappearsLosesItsSeries) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}, {"prometheus-main-shard-1-0", 200}}));
  prom_->answer(vectorOf({{"prometheus-main-0", 110}}));
  auto t = target();
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_THAT(metrics_.serialize(), HasSubstr("shard=\"1\""));
  clock_.advance(5s);
  ASSERT_TRUE(notified_.awaitCount(2));
  const std::string text = metrics_.serialize();
  EXPECT_THAT(text, Not(HasSubstr("shard=\"1\"")));
  EXPECT_THAT(text, HasSubstr("shard=\"0\",shardset=\"main\"} 110"));
}

TEST_F(IngestionMonitorTest, AnUnusableUrlIsReportedAndRetriedAtTheInterval) {
  auto t = target("main", "ftp://prom");
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error_reason, kReasonInvalidPrometheusURL);
  EXPECT_TRUE(prom_->queries().empty());
  EXPECT_EQ(nextQueryIn(), 5s);
}

// spec.ingestion.prometheusURL is written by whoever may create a ShardSet: outside the admin's
// allow-list it is refused before a client exists, so nothing is ever sent to it.
TEST_F(IngestionMonitorTest, AUrlOutsideTheAllowListIsNeverQueried) {
  makeMonitor(2, *PrometheusUrlPolicy::make({"http://*.svc:9090"}, ""));
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  auto t = target("main", "http://169.254.169.254:9090");
  t.interval = 5s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(notified_.awaitCount(1));
  auto s = monitor_->snapshot("monitoring/main");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->error_reason, kReasonPrometheusURLNotAllowed);
  EXPECT_THAT(s->error, HasSubstr("--prometheus-url-allow"));
  EXPECT_TRUE(prom_->queries().empty());
  EXPECT_TRUE(clientsMade().empty());
  EXPECT_THAT(metrics_.serialize(),
              HasSubstr("reason=\"ingestion_prometheus_url_not_allowed\"} 1"));
  clock_.advance(5s);  // checked again at the interval, still not sent
  ASSERT_TRUE(notified_.awaitCount(2));
  EXPECT_TRUE(prom_->queries().empty());

  // A query in the URL is refused whatever the allow-list says.
  monitor_->track("monitoring/main", target("main", "http://prometheus.monitoring.svc:9090/?a=b"));
  ASSERT_TRUE(notified_.awaitCount(3));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error_reason, kReasonInvalidPrometheusURL);
  EXPECT_TRUE(prom_->queries().empty());

  monitor_->track("monitoring/main", target("main", "http://prometheus.monitoring.svc:9090"));
  ASSERT_TRUE(notified_.awaitCount(4));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error, "");
  EXPECT_EQ(prom_->queries().size(), 1u);
}

TEST(IngestionMonitorOptionsTest, TheDefaultAllowListIsTheClustersServices) {
  const IngestionMonitorOptions options;
  EXPECT_EQ(options.url_policy.refusal("http://prometheus-operated.monitoring.svc:9090"),
            std::nullopt);
  auto refused = options.url_policy.refusal("http://prom:9090");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->reason, kReasonPrometheusURLNotAllowed);
}

TEST_F(IngestionMonitorTest, UntrackStopsQueryingAndDropsTheSeries) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  monitor_->track("monitoring/main", target());
  ASSERT_TRUE(notified_.awaitCount(1));
  monitor_->untrack("monitoring/main");
  EXPECT_EQ(monitor_->snapshot("monitoring/main"), std::nullopt);
  EXPECT_TRUE(monitor_->trackedKeys().empty());
  EXPECT_EQ(nextQueryIn(), std::nullopt);
  EXPECT_THAT(metrics_.serialize(), Not(HasSubstr("shardscaler_ingestion_samples_per_second{")));
  clock_.advance(1h);
  EXPECT_EQ(nextQueryIn(), std::nullopt);
  EXPECT_EQ(prom_->queries().size(), 1u);
  monitor_->untrack("monitoring/main");  // idempotent
}

TEST_F(IngestionMonitorTest, AnAnswerForAnUntrackedShardSetIsDiscarded) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  prom_->holdNext();
  monitor_->track("monitoring/main", target());
  ASSERT_TRUE(prom_->awaitHeld());
  monitor_->untrack("monitoring/main");
  prom_->release();
  ASSERT_TRUE(clock_.awaitWaiters(2, kRealTimeout));  // both workers idle: the answer is in
  EXPECT_EQ(prom_->queries().size(), 1u);
  EXPECT_EQ(nextQueryIn(), std::nullopt);
  EXPECT_EQ(monitor_->snapshot("monitoring/main"), std::nullopt);
  EXPECT_TRUE(notified_.keys().empty());
  EXPECT_THAT(metrics_.serialize(), Not(HasSubstr("shardset=\"main\"")));
}

TEST_F(IngestionMonitorTest, RetargetingWhileAQueryIsInFlightQueriesTheNewTargetAtOnce) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  prom_->holdNext();
  monitor_->track("monitoring/main", target());
  ASSERT_TRUE(prom_->awaitHeld());
  auto changed = target();
  changed.query = "sum by (pod) (rate(x{namespace=\"$NAMESPACE\"}[1m]))";
  monitor_->track("monitoring/main", changed);
  prom_->release();
  ASSERT_TRUE(notified_.awaitCount(1));  // only the new target's answer is reported
  auto queries = prom_->queries();
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[1].query, "sum by (pod) (rate(x{namespace=\"monitoring\"}[1m]))");
  EXPECT_EQ(nextQueryIn(), 30s);
  EXPECT_EQ(notified_.keys().size(), 1u);
}

TEST_F(IngestionMonitorTest, OneKeyIsNeverQueriedTwiceAtOnceAndASlowQueryIsFollowedByAPause) {
  prom_->answer(vectorOf({{"prometheus-main-0", 100}}));
  prom_->holdNext();
  auto t = target();
  t.interval = 2s;
  monitor_->track("monitoring/main", t);
  ASSERT_TRUE(prom_->awaitHeld());
  clock_.advance(5s);  // overdue while in flight; the other worker must leave it alone
  EXPECT_EQ(nextQueryIn(), std::nullopt);
  EXPECT_TRUE(clock_.awaitWaiters(1, kRealTimeout));
  EXPECT_EQ(prom_->queries().size(), 1u);
  prom_->release();
  ASSERT_TRUE(notified_.awaitCount(1));
  // Started 5 s ago with a 2 s interval: due long ago, but half an interval after it ended.
  EXPECT_EQ(nextQueryIn(), 1s);
  clock_.advance(1s);
  ASSERT_TRUE(notified_.awaitCount(2));
  EXPECT_EQ(prom_->queries().size(), 2u);
  EXPECT_EQ(nextQueryIn(), 2s);
}

TEST_F(IngestionMonitorTest, ShardSetsOnOnePrometheusShareOneClient) {
  prom_->answer(vectorOf({{"prometheus-a-0", 1}, {"prometheus-b-0", 2}}));
  monitor_->track("monitoring/a", target("a"));
  monitor_->track("monitoring/b", target("b"));
  ASSERT_TRUE(notified_.awaitCount(2));
  EXPECT_EQ(clientsMade().size(), 1u);
  EXPECT_EQ(monitor_->snapshot("monitoring/a")->per_shard, (std::vector<ShardRate>{{0, 1}}));
  EXPECT_EQ(monitor_->snapshot("monitoring/b")->per_shard, (std::vector<ShardRate>{{0, 2}}));
  // Another URL gets its own client; an unused one is dropped.
  monitor_->track("monitoring/b", target("b", "http://other:9090"));
  ASSERT_TRUE(notified_.awaitCount(3));
  EXPECT_EQ(clientsMade().size(), 2u);
  monitor_->track("monitoring/b", target("b"));
  ASSERT_TRUE(notified_.awaitCount(4));
  EXPECT_EQ(clientsMade().size(), 2u);
}

TEST_F(IngestionMonitorTest, StopReturnsWithNothingTrackedAndAfterwardsNothingRuns) {
  monitor_->stop();
  monitor_->track("monitoring/main", target());
  EXPECT_TRUE(prom_->queries().empty());
  monitor_->stop();  // idempotent
}

}  // namespace
}  // namespace shardscaler::ingestion
