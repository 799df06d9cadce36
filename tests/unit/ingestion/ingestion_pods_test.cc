// The ingestion monitor for a ShardSet that names no Prometheus: each shard pod's counter read
// twice or more makes its rate (replicas averaged, resets counted as the new value), with a fake
// pod source on a ManualClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>

#include "shardscaler/ingestion/ingestion_monitor.h"
#include "shardscaler/ingestion/ingestion_result.h"

namespace shardscaler::ingestion {
namespace ingestion_pods_test {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr auto kRealTimeout = 10s;
using Time = std::chrono::system_clock::time_point;

// Answers each read with the next scripted round (the last repeats) and counts the reads.
class ScriptedPods final : public ShardMetricsSource {
 public:
  void script(Expected<std::vector<ShardReading>> round) {
    std::lock_guard lock(mutex_);
    rounds_.push_back(std::move(round));
  }
  void setUnsupported(std::string why) {
    std::lock_guard lock(mutex_);
    unsupported_ = std::move(why);
  }
  bool awaitReads(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kRealTimeout, [&] { return reads_ >= n; });
  }
  ShardSource lastSource() const {
    std::lock_guard lock(mutex_);
    return last_;
  }

  Expected<std::vector<ShardReading>> readTarget(const ShardSource& source) override {
    std::lock_guard lock(mutex_);
    last_ = source;
    ++reads_;
    cv_.notify_all();
    auto round = rounds_.front();
    if (rounds_.size() > 1) rounds_.pop_front();
    return round;
  }
  Expected<std::vector<ShardReading>> readShards(const ShardSource&,
                                                 std::span<const nlohmann::json>) override {
    return std::unexpected(std::string("not used"));
  }
  std::string unsupported(const ShardSource&) const override {
    std::lock_guard lock(mutex_);
    return unsupported_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Expected<std::vector<ShardReading>>> rounds_;
  std::string unsupported_;
  ShardSource last_;
  int reads_ = 0;
};

Time at(int seconds) { return Time(std::chrono::seconds(1'800'000'000 + seconds)); }

PodReading reading(int shard, int replica, int seconds, double value, double start = 1.0) {
  return {.pod = {.name = "prometheus-main-shard-" + std::to_string(shard) + "-" +
                          std::to_string(replica),
                  .uid = "uid-" + std::to_string(shard) + "-" + std::to_string(replica)},
          .at = at(seconds),
          .metrics = PodMetrics{.samples_appended = value, .process_start = start}};
}

ShardReading shard(int index, std::vector<PodReading> readings) {
  return {.index = index, .pods = {}, .readings = std::move(readings)};
}

class IngestionPodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IngestionMonitorOptions options;
    options.workers = 1;
    options.jitter = 0;
    options.pod_source = pods_;
    monitor_ = std::make_unique<IngestionMonitor>(
        clock_, &metrics_, [this](const std::string&) { notified(); }, options);
    monitor_->start();
  }
  void TearDown() override { monitor_->stop(); }

  void notified() {
    std::lock_guard lock(mutex_);
    ++notifications_;
    cv_.notify_all();
  }
  bool awaitNotifications(int n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kRealTimeout, [&] { return notifications_ >= n; });
  }
  int notifications() {
    std::lock_guard lock(mutex_);
    return notifications_;
  }

  static IngestionTarget target() {
    IngestionTarget t;
    t.ns = "monitoring";
    t.shard_set = "main";
    t.target_name = "main";
    t.interval = 30s;
    t.target_samples_per_shard = 15;
    t.web_tls = {.https = true};
    return t;
  }

  // Tracks the target and lets `rounds` reads happen, one interval apart.
  void readRounds(int rounds) {
    monitor_->track("monitoring/main", target());
    for (int i = 1; i <= rounds; ++i) {
      ASSERT_TRUE(pods_->awaitReads(i));
      if (i < rounds) {
        // The round is over once the next is scheduled.
        ASSERT_TRUE(awaitIdle());
        clock_.advance(30s);
      }
    }
  }
  bool awaitIdle() {
    const auto until = std::chrono::steady_clock::now() + kRealTimeout;
    while (std::chrono::steady_clock::now() < until) {
      if (monitor_->nextQueryAt()) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }

  k8s::ManualClock clock_;
  telemetry::Metrics metrics_;
  std::shared_ptr<ScriptedPods> pods_ = std::make_shared<ScriptedPods>();
  std::unique_ptr<IngestionMonitor> monitor_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int notifications_ = 0;
};

TEST_F(IngestionPodsTest, TheSecondReadingOfEachPodMakesItsRateAndReplicasAreAveraged) {
  pods_->script(std::vector{shard(0, {reading(0, 0, 0, 100), reading(0, 1, 0, 1000)}),
                            shard(1, {reading(1, 0, 0, 50)})});
  pods_->script(std::vector{shard(0, {reading(0, 0, 30, 400), reading(0, 1, 30, 1600)}),
                            shard(1, {reading(1, 0, 30, 200)})});
  ASSERT_NO_FATAL_FAILURE(readRounds(1));
  ASSERT_TRUE(awaitIdle());
  EXPECT_FALSE(monitor_->snapshot("monitoring/main")) << "one reading makes no rate";
  EXPECT_EQ(notifications(), 0);
  EXPECT_EQ(
      pods_->lastSource(),
      (ShardSource{
          .ns = "monitoring", .target_name = "main", .shard_set = "main", .tls = {.https = true}}));
  clock_.advance(30s);
  ASSERT_TRUE(awaitNotifications(1));
  auto s = monitor_->snapshot("monitoring/main");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->error, "");
  // (300/30 + 600/30) / 2 = 15, and 150/30 = 5.
  EXPECT_EQ(s->per_shard, (std::vector<ShardRate>{{0, 15}, {1, 5}}));
  EXPECT_EQ(s->total_samples_per_second, 20);
  EXPECT_EQ(s->recommended_shards, 2);
}

TEST_F(IngestionPodsTest, ACounterResetCountsWhatTheNewProcessAppended) {
  pods_->script(std::vector{shard(0, {reading(0, 0, 0, 1000, 1.0)})});
  pods_->script(std::vector{shard(0, {reading(0, 0, 30, 90, 2.0)})});
  ASSERT_NO_FATAL_FAILURE(readRounds(2));
  ASSERT_TRUE(awaitNotifications(1));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->per_shard, (std::vector<ShardRate>{{0, 3}}));
}

TEST_F(IngestionPodsTest, AnUnreadablePodLeavesItsShardOutAndNoneReadableIsAnError) {
  PodReading failed = reading(1, 0, 0, 0);
  failed.metrics =
      std::unexpected(std::string("pod prometheus-main-shard-1-0 runs but its "
                                  "metrics cannot be read: connection refused"));
  pods_->script(std::vector{shard(0, {reading(0, 0, 0, 0)}), shard(1, {failed})});
  pods_->script(std::vector{shard(0, {reading(0, 0, 30, 300)}), shard(1, {failed})});
  ASSERT_NO_FATAL_FAILURE(readRounds(2));
  ASSERT_TRUE(awaitNotifications(1));
  auto s = monitor_->snapshot("monitoring/main");
  EXPECT_EQ(s->per_shard, (std::vector<ShardRate>{{0, 10}}));
  EXPECT_THAT(metrics_.serialize(),
              HasSubstr("shardscaler_degraded_events_total{reason=\"ingestion_pod_unreadable\"}"));

  pods_->script(std::vector{shard(0, {failed}), shard(1, {failed})});
  ASSERT_TRUE(awaitIdle());
  clock_.advance(30s);
  ASSERT_TRUE(awaitNotifications(2));
  // The second round answered once more (its readings are no newer), then the failing one.
  clock_.advance(30s);
  ASSERT_TRUE(awaitNotifications(3));
  s = monitor_->snapshot("monitoring/main");
  EXPECT_EQ(s->error_reason, kReasonShardPodsUnreadable);
  EXPECT_THAT(s->error, HasSubstr("connection refused"));
  EXPECT_TRUE(s->per_shard.empty());
}

TEST_F(IngestionPodsTest, UnlistablePodsAndUnsupportedTlsAreErrorsAtOnce) {
  pods_->script(std::unexpected(std::string("cannot list the shards' pods: Forbidden")));
  ASSERT_NO_FATAL_FAILURE(readRounds(1));
  ASSERT_TRUE(awaitNotifications(1));
  EXPECT_EQ(monitor_->snapshot("monitoring/main")->error_reason, kReasonShardPodsUnlisted);

  pods_->setUnsupported("Prometheus main requires a client certificate");
  ASSERT_TRUE(awaitIdle());
  clock_.advance(30s);
  ASSERT_TRUE(awaitNotifications(2));
  auto s = monitor_->snapshot("monitoring/main");
  EXPECT_EQ(s->error_reason, kReasonUnsupportedWebTLS);
  EXPECT_EQ(s->error, "Prometheus main requires a client certificate");
}

}  // namespace
}  // namespace ingestion_pods_test
}  // namespace shardscaler::ingestion
