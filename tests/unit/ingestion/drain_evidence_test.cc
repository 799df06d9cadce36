// The drain's rules on what a due shard's pods' metrics say (docs/design/drain.md), whatever read
// them: drained only with evidence from each pod's own Prometheus, run since before the detach,
// with every configured queue caught up; absence of evidence is never drained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "shardscaler/ingestion/drain_evidence.h"

namespace shardscaler::ingestion {
namespace drain_evidence_test {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Pods = std::map<std::string, PodEvidence, std::less<>>;

constexpr double kNow = 1'800'000'000;  // when the metrics were read, Unix seconds
const auto kDetachedAt = std::chrono::system_clock::time_point(std::chrono::seconds(1'799'999'000));
constexpr double kStartedLongBefore = 1'700'000'000;
const std::string kPod0 = "prometheus-main-shard-2-0";
const std::string kPod1 = "prometheus-main-shard-2-1";

DrainShard shard(int32_t remote_writes = 1) {
  return {.stateful_set = "prometheus-main-shard-2",
          .replicas = 2,
          .detached_at = kDetachedAt,
          .remote_writes = remote_writes};
}

// A pod whose own Prometheus was read, started long before the detach, with one queue that sent
// up to `sent` of what it appended up to `appended` and holds `pending` samples.
PodEvidence pod(double appended, double sent, double pending = 0) {
  return {.up = true,
          .prometheus_started = kStartedLongBefore,
          .highest_appended = appended,
          .queues = {{.name = "receiver (http://receiver/api/v1/write)",
                      .samples_pending = pending,
                      .highest_sent = sent}}};
}

planner::DrainReading judge(const Pods& pods, const DrainShard& subject = shard(),
                            bool custom = false) {
  return judgeDrain(subject, pods, kNow, {.custom_condition = custom, .max_lag = 30s});
}

TEST(DrainEvidence, EveryQueueCaughtUpOnEveryPodIsDrained) {
  const auto r = judge({{kPod0, pod(kNow - 5, kNow - 8)}, {kPod1, pod(kNow - 5, kNow - 17)}});
  EXPECT_TRUE(r.drained) << r.reason;
  EXPECT_EQ(r.lag_seconds, 12);
  EXPECT_FALSE(r.failed);
}

TEST(DrainEvidence, APodLaggingPastMaxLagIsNotDrainedAndTheLargestLagIsReported) {
  const auto r = judge({{kPod0, pod(kNow - 5, kNow - 36)}, {kPod1, pod(kNow - 5, kNow - 95)}});
  EXPECT_FALSE(r.drained);
  EXPECT_FALSE(r.failed) << "a lag is evidence: it counts toward the timeout";
  EXPECT_EQ(r.lag_seconds, 90);
  EXPECT_THAT(r.reason, HasSubstr(kPod0));
  EXPECT_THAT(r.reason, HasSubstr("by more than 30s")) << "the same text whatever the lag";
}

// A detached shard stops appending: with samples pending, its lag is the age of the newest sample
// the receiver has, which keeps growing, not the frozen difference of the two timestamps.
TEST(DrainEvidence, AQueueWithSamplesPendingLagsByTheAgeOfWhatItSent) {
  const auto r =
      judge({{kPod0, pod(kNow - 100, kNow - 105, 40)}, {kPod1, pod(kNow - 5, kNow - 5)}});
  EXPECT_FALSE(r.drained);
  EXPECT_EQ(r.lag_seconds, 105);
}

TEST(DrainEvidence, AQueueThatNeverSentLagsByAllItHoldsAndCaughtUpWhenItHoldsNothing) {
  PodEvidence never_sent = pod(kNow - 5, 0, 12);
  never_sent.queues[0].highest_sent.reset();
  const auto r = judge({{kPod0, never_sent}, {kPod1, pod(kNow - 5, kNow - 5)}});
  EXPECT_FALSE(r.drained);
  EXPECT_EQ(r.lag_seconds, kNow - kStartedLongBefore) << "its whole run";

  PodEvidence dropped_all = pod(kNow - 5, 0, 0);  // write relabelling drops every series
  dropped_all.queues[0].highest_sent.reset();
  EXPECT_TRUE(judge({{kPod0, dropped_all}, {kPod1, pod(kNow - 5, kNow - 5)}}).drained);
}

// (a) A config-reloader or Thanos sidecar scraped as up, the Prometheus port not scraped: no
// remote-storage series is no queue only when Prometheus itself said so.
TEST(DrainEvidence, APodWhosePrometheusItselfWasNotReadIsNeverDrained) {
  const PodEvidence sidecar_only{.up = true};
  for (int32_t remote_writes : {0, 1}) {
    const auto r =
        judge({{kPod0, sidecar_only}, {kPod1, pod(kNow - 5, kNow - 5)}}, shard(remote_writes));
    EXPECT_FALSE(r.drained) << remote_writes;
    EXPECT_FALSE(r.failed);
    EXPECT_THAT(r.reason, HasSubstr(kPod0 + "'s Prometheus itself is not scraped"));
  }
  // With its own metrics read and no queue configured or running: nothing to ship.
  const PodEvidence no_remote_write{.up = true, .prometheus_started = kStartedLongBefore};
  EXPECT_TRUE(judge({{kPod0, no_remote_write}, {kPod1, no_remote_write}}, shard(0)).drained);
}

// (b) Restarted after the detach (an eviction, an OOM kill) while its receiver was down: the new
// process has nothing pending and never sent, yet what the old one held was never shipped; remote
// write sends only what a Prometheus appends after it starts.
TEST(DrainEvidence, APrometheusStartedAfterTheDetachIsNeverDrained) {
  PodEvidence restarted = pod(kNow - 500, 0, 0);
  restarted.queues[0].highest_sent.reset();
  restarted.prometheus_started = kNow - 60;
  const auto r = judge({{kPod0, restarted}, {kPod1, pod(kNow - 5, kNow - 5)}});
  EXPECT_FALSE(r.drained);
  EXPECT_FALSE(r.failed);
  EXPECT_THAT(r.reason, HasSubstr(kPod0 + "'s Prometheus started at 2027-01-15T07:59:00Z, after "
                                          "the shard was detached at 2027-01-15T07:43:20Z"));

  // One that ran since before the detach and caught up is drained, even had it started a moment
  // before the detach.
  PodEvidence just_before = pod(kNow - 5, kNow - 5);
  just_before.prometheus_started = 1'799'998'999.5;
  EXPECT_TRUE(judge({{kPod0, just_before}, {kPod1, pod(kNow - 5, kNow - 5)}}).drained);

  // Without a known detach time a restart since cannot be ruled out.
  DrainShard unknown = shard();
  unknown.detached_at.reset();
  const auto u =
      judge({{kPod0, pod(kNow - 5, kNow - 5)}, {kPod1, pod(kNow - 5, kNow - 5)}}, unknown);
  EXPECT_FALSE(u.drained);
  EXPECT_THAT(u.reason, HasSubstr("detach time of StatefulSet prometheus-main-shard-2 is unknown"));

  // A Prometheus without remote write has nothing to ship: its restart loses nothing.
  const PodEvidence plain{.up = true, .prometheus_started = kNow - 60};
  EXPECT_TRUE(judge({{kPod0, plain}, {kPod1, plain}}, shard(0)).drained);
}

TEST(DrainEvidence, EveryConfiguredQueueMustBePresent) {
  const auto missing =
      judge({{kPod0, pod(kNow - 5, kNow - 5)}, {kPod1, pod(kNow - 5, kNow - 5)}}, shard(2));
  EXPECT_FALSE(missing.drained);
  EXPECT_THAT(missing.reason, HasSubstr("has 1 of the 2 remote-write queues"));

  PodEvidence started_no_queue{.up = true, .prometheus_started = kStartedLongBefore};
  EXPECT_FALSE(judge({{kPod0, started_no_queue}, {kPod1, pod(kNow - 5, kNow - 5)}}).drained)
      << "a queue not running yet is not a queue with nothing to ship";

  PodEvidence no_pending = pod(kNow - 5, kNow - 5);
  no_pending.queues[0].samples_pending.reset();
  EXPECT_THAT(judge({{kPod0, no_pending}, {kPod1, pod(kNow - 5, kNow - 5)}}).reason,
              HasSubstr("has no prometheus_remote_storage_samples_pending"));

  PodEvidence no_appended = pod(kNow - 5, kNow - 5);
  no_appended.highest_appended.reset();
  EXPECT_FALSE(judge({{kPod0, no_appended}, {kPod1, pod(kNow - 5, kNow - 5)}}).drained);
}

TEST(DrainEvidence, APodNotScrapedIsNeverDrained) {
  const auto missing = judge({{kPod0, pod(kNow - 5, kNow - 5)}});
  EXPECT_FALSE(missing.drained);
  EXPECT_FALSE(missing.failed) << "a pod that is down is the shard's state, not a failed read";
  EXPECT_THAT(missing.reason, HasSubstr(kPod1 + " is not scraped (up missing)"));
  PodEvidence down = pod(kNow - 5, kNow - 5);
  down.up = false;
  const auto d = judge({{kPod0, pod(kNow - 5, kNow - 5)}, {kPod1, down}});
  EXPECT_FALSE(d.drained);
  EXPECT_THAT(d.reason, HasSubstr("up not 1"));
}

TEST(DrainEvidence, AStatefulSetWithoutReplicasHasNoEvidenceAndIsNotDrained) {
  DrainShard scaled_to_zero = shard();
  scaled_to_zero.replicas = 0;
  const auto r = judge({}, scaled_to_zero);
  EXPECT_FALSE(r.drained);
  EXPECT_THAT(r.reason, HasSubstr("has no replicas"));
}

TEST(DrainEvidence, MetricsThatCannotBeReadFailTheReading) {
  PodEvidence twice = pod(kNow - 5, kNow - 5);
  twice.unreadable = "two series of prometheus_remote_storage_samples_pending in the answer";
  const auto r = judge({{kPod0, twice}, {kPod1, pod(kNow - 5, kNow - 5)}});
  EXPECT_FALSE(r.drained);
  EXPECT_TRUE(r.failed) << "no evidence either way: it must not count toward the timeout";
  EXPECT_THAT(r.reason, HasSubstr("two series"));
}

TEST(DrainEvidence, AUserConditionHoldsOnlyWithOneFiniteSeriesForEveryPod) {
  const PodEvidence read{.up = true, .prometheus_started = kStartedLongBefore};
  PodEvidence holds = read, holds_zero = read, twice = read, nan = read;
  holds.condition_values = {5};
  holds_zero.condition_values = {0};
  twice.condition_values = {1, 1};
  nan.condition_values = {std::nan("")};
  EXPECT_TRUE(judge({{kPod0, holds}, {kPod1, holds_zero}}, shard(), true).drained)
      << "a filter's value may be 0";
  const auto partial = judge({{kPod0, holds}, {kPod1, read}}, shard(), true);
  EXPECT_FALSE(partial.drained);
  EXPECT_FALSE(partial.failed);
  EXPECT_THAT(partial.reason, HasSubstr("does not hold for pod " + kPod1));
  EXPECT_TRUE(judge({{kPod0, holds}, {kPod1, twice}}, shard(), true).failed);
  EXPECT_TRUE(judge({{kPod0, holds}, {kPod1, nan}}, shard(), true).failed);
  // Its own Prometheus read, and not restarted since the detach, as under the default condition.
  PodEvidence restarted = holds;
  restarted.prometheus_started = kNow - 60;
  EXPECT_THAT(judge({{kPod0, holds}, {kPod1, restarted}}, shard(), true).reason,
              HasSubstr("after the shard was detached"));
  PodEvidence sidecar{.up = true, .condition_values = {1}};
  EXPECT_FALSE(judge({{kPod0, holds}, {kPod1, sidecar}}, shard(), true).drained);
}

TEST(DrainEvidence, TheSurvivorsHaveReloadedAtTheirEarliestReloadAndOnlyWhenAllWereRead) {
  const std::vector<planner::Decision::DrainSurvivor> pods = {
      {.stateful_set = "prometheus-main", .replicas = 1},
      {.stateful_set = "prometheus-main-shard-1", .replicas = 1}};
  const auto at = [](double s) {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(s)));
  };
  EXPECT_EQ(survivorsReloadedAt(
                pods, {{"prometheus-main-0", 1000.5}, {"prometheus-main-shard-1-0", 900}}),
            at(900));
  EXPECT_EQ(survivorsReloadedAt(pods, {{"prometheus-main-0", 1000}}), std::nullopt);
  EXPECT_EQ(survivorsReloadedAt(
                pods, {{"prometheus-main-0", 1000}, {"prometheus-main-shard-1-0", std::nan("")}}),
            std::nullopt);
  EXPECT_EQ(survivorsReloadedAt({}, {}), std::nullopt);
  // Every replica of a survivor counts: with two, the second must have reloaded too.
  const std::vector<planner::Decision::DrainSurvivor> replicated = {
      {.stateful_set = "prometheus-main", .replicas = 2}};
  EXPECT_EQ(survivorsReloadedAt(replicated, {{"prometheus-main-0", 1000}}), std::nullopt);
  EXPECT_EQ(
      survivorsReloadedAt(replicated, {{"prometheus-main-0", 1000}, {"prometheus-main-1", 950}}),
      at(950));
}

}  // namespace
}  // namespace drain_evidence_test
}  // namespace shardscaler::ingestion
