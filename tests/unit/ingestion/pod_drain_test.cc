#include "shardscaler/ingestion/pod_drain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shardscaler::ingestion {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Time = std::chrono::system_clock::time_point;

constexpr double kStarted = 1'700'000'000;
const Time kDetached{std::chrono::seconds(1'700'000'500)};
const Time kReadAt{std::chrono::seconds(1'700'001'000)};
constexpr std::string_view kSts = "prom-agent-main-shard-1";

ShardPod pod(int32_t ordinal, PodRun run = PodRun::Running) {
  return {.name = std::string(kSts) + "-" + std::to_string(ordinal),
          .uid = "uid-" + std::to_string(ordinal),
          .ordinal = ordinal,
          .ip = "10.0.0.1",
          .web_port = 9090,
          .run = run};
}

// A pod's Prometheus, started before the detach, with one queue.
PodReading read(const ShardPod& p, std::optional<double> pending, std::optional<double> sent,
                double highest = 1'700'000'990) {
  PodMetrics metrics{
      .process_start = kStarted, .prometheus_build_info = true, .highest_appended = highest};
  if (pending || sent) {
    metrics.queues.push_back(
        {.remote_name = "r", .url = "http://r", .pending = pending, .highest_sent = sent});
  }
  return {.pod = p, .at = kReadAt, .answered = true, .metrics = metrics};
}

ShardReading shard(std::vector<ShardPod> pods, std::vector<PodReading> readings,
                   int32_t replicas = 1) {
  return {.index = 1,
          .pods = {.stateful_set = std::string(kSts),
                   .uid = "sts",
                   .replicas = replicas,
                   .pods = std::move(pods)},
          .readings = std::move(readings)};
}

planner::DrainReading judge(const ShardReading& read, int32_t replicas = 1,
                            int32_t remote_writes = 1) {
  const DrainShard due{.stateful_set = std::string(kSts),
                       .replicas = replicas,
                       .detached_at = kDetached,
                       .remote_writes = remote_writes};
  auto readings = readPodDrains(std::span(&due, 1), {}, std::span(&read, 1), 30s);
  return readings.at(due.stateful_set);
}

TEST(PodDrain, CaughtUpPodsDrainWithTheirLargestLag) {
  const auto r = judge(
      shard({pod(0), pod(1)}, {read(pod(0), 0, 1'700'000'985), read(pod(1), 3, 1'700'000'996)}, 2),
      2);
  EXPECT_TRUE(r.drained) << r.reason;
  EXPECT_EQ(r.lag_seconds, 5);
}

TEST(PodDrain, PendingSamplesLagFromTheReadingAndAQueueThatNeverSentLagsByItsWholeRun) {
  const auto stuck = judge(shard({pod(0)}, {read(pod(0), 10, 1'700'000'950)}));
  EXPECT_FALSE(stuck.drained);
  EXPECT_EQ(stuck.lag_seconds, 50);
  EXPECT_EQ(stuck.reason,
            "pod prom-agent-main-shard-1-0 lags behind in remote write by more than 30s "
            "(maxLagSeconds)");
  const auto never = judge(shard({pod(0)}, {read(pod(0), 10, std::nullopt)}));
  EXPECT_FALSE(never.drained);
  EXPECT_EQ(never.lag_seconds, 1000);
}

// A pod that runs and whose /metrics did not answer is not drained; as `up` 0 is, it counts toward
// the timeout. What answered but cannot be read (a NaN, a queue twice) is a failed reading.
TEST(PodDrain, ARunningPodThatCannotBeReadKeepsItsShard) {
  PodReading refused{.pod = pod(0),
                     .at = kReadAt,
                     .metrics = std::unexpected(std::string(
                         "pod prom-agent-main-shard-1-0 runs but its metrics cannot be read: "
                         "connection refused"))};
  const auto r = judge(shard({pod(0)}, {refused}));
  EXPECT_FALSE(r.drained);
  EXPECT_FALSE(r.failed);
  EXPECT_THAT(r.reason, HasSubstr("connection refused, so nothing says its data was shipped"));
  PodReading doubtful{.pod = pod(0),
                      .at = kReadAt,
                      .answered = true,
                      .metrics = std::unexpected(std::string("process_start_time_seconds has two "
                                                             "series, not one"))};
  const auto failed = judge(shard({pod(0)}, {doubtful}));
  EXPECT_FALSE(failed.drained);
  EXPECT_TRUE(failed.failed);
}

TEST(PodDrain, ASidecarsAnswerOrARestartSinceTheDetachSaysNothing) {
  PodReading sidecar = read(pod(0), 0, 1'700'000'990);
  sidecar.metrics->prometheus_build_info = false;
  const auto r = judge(shard({pod(0)}, {sidecar}));
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr("Prometheus itself is not scraped"));
  PodReading restarted = read(pod(0), 0, std::nullopt, 0);
  restarted.metrics->process_start = 1'700'000'600;
  const auto after = judge(shard({pod(0)}, {restarted}));
  EXPECT_FALSE(after.drained);
  EXPECT_THAT(after.reason, HasSubstr("after the shard was detached"));
}

TEST(PodDrain, EveryConfiguredQueueMustBePresent) {
  const auto r = judge(shard({pod(0)}, {read(pod(0), std::nullopt, std::nullopt)}));
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr("has 0 of the 1 remote-write queues"));
  // Nothing to ship: a configuration without remote write.
  EXPECT_TRUE(judge(shard({pod(0)}, {read(pod(0), std::nullopt, std::nullopt)}), 1, 0).drained);
}

// A pod that never ran, of a StatefulSet without volumes, holds nothing: no process of it ever
// ran, and nothing an earlier pod of its name wrote outlives that pod. With volumes, one may hold
// an earlier pod's unshipped WAL. A pod that ran and ended, or is not there, says nothing.
TEST(PodDrain, APodThatNeverRanHoldsNothingUnlessAVolumeOutlivesItsPods) {
  const auto never = judge(shard({pod(0, PodRun::NotStarted)}, {}));
  EXPECT_TRUE(never.drained) << never.reason;
  EXPECT_FALSE(never.lag_seconds);
  ShardReading with_volume = shard({pod(0, PodRun::NotStarted)}, {});
  with_volume.pods.keeps_volumes = true;
  const auto kept = judge(with_volume);
  EXPECT_FALSE(kept.drained);
  EXPECT_FALSE(kept.failed);
  EXPECT_THAT(kept.reason, HasSubstr("volumeClaimTemplates"));
  ShardPod going = pod(0, PodRun::NotStarted);
  going.terminating = true;
  EXPECT_FALSE(judge(shard({going}, {})).drained);
  // One pod read and caught up, one that never ran: drained.
  EXPECT_TRUE(
      judge(shard({pod(0), pod(1, PodRun::NotStarted)}, {read(pod(0), 0, 1'700'000'990)}, 2), 2)
          .drained);
}

TEST(PodDrain, APodThatEndedOrIsMissingKeepsItsShard) {
  const auto ended = judge(shard({pod(0, PodRun::Ended)}, {}));
  EXPECT_FALSE(ended.drained);
  EXPECT_FALSE(ended.failed);
  EXPECT_THAT(ended.reason, HasSubstr("does not run (Ended)"));
  const auto missing = judge(shard({pod(0)}, {read(pod(0), 0, 1'700'000'990)}, 2), 2);
  EXPECT_FALSE(missing.drained);
  EXPECT_THAT(missing.reason, HasSubstr("pod prom-agent-main-shard-1-1 does not exist"));
  ShardReading foreign = shard({}, {}, 1);
  foreign.pods.foreign = {"prom-agent-main-shard-1-0"};
  EXPECT_THAT(judge(foreign).reason, HasSubstr("is not controlled by StatefulSet"));
  ShardReading broken = shard({}, {});
  broken.pods.problem = "StatefulSet x has no usable spec.selector";
  EXPECT_THAT(judge(broken).reason, HasSubstr("no usable spec.selector"));
}

// Scaled to zero: no pod runs; its volumes stay with whatever it did not ship.
TEST(PodDrain, AShardWithZeroReplicasIsNotDrained) {
  const auto r = judge(shard({}, {}, 0), 0);
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr("has no replicas"));
}

TEST(PodDrain, TheSurvivorsReloadIsTheEarliestOfTheirPodsAndNeedsEveryOne) {
  const DrainShard due{.stateful_set = std::string(kSts), .detached_at = kDetached};
  const std::vector<planner::Decision::DrainSurvivor> survivors{
      {.stateful_set = "prom-agent-main", .replicas = 2}};
  auto survivor = [](int32_t ordinal, std::optional<double> reload) {
    ShardPod p{.name = "prom-agent-main-" + std::to_string(ordinal), .ordinal = ordinal};
    PodReading r{.pod = p, .at = kReadAt, .answered = true, .metrics = PodMetrics{}};
    r.metrics->last_reload = reload;
    return r;
  };
  const std::vector<ShardReading> both{
      shard({pod(0)}, {read(pod(0), 0, 1'700'000'990)}),
      {.pods = {.stateful_set = "prom-agent-main", .replicas = 2},
       .readings = {survivor(0, 1'700'000'700), survivor(1, 1'700'000'600)}}};
  auto readings = readPodDrains(std::span(&due, 1), survivors, both, 30s);
  EXPECT_EQ(readings.at(due.stateful_set).survivors_reloaded_at,
            Time(std::chrono::seconds(1'700'000'600)));
  const std::vector<ShardReading> one{both[0],
                                      {.pods = {.stateful_set = "prom-agent-main", .replicas = 2},
                                       .readings = {survivor(0, 1'700'000'700)}}};
  readings = readPodDrains(std::span(&due, 1), survivors, one, 30s);
  EXPECT_FALSE(readings.at(due.stateful_set).survivors_reloaded_at);
}

}  // namespace
}  // namespace shardscaler::ingestion
