// 5f: crash safety. shardscaler is SIGKILLed at varied moments of a scale-down and of a
// scale-up, then started again; the end state must be the correct one, the target never left
// paused by shardscaler, and nothing deleted that should not have been.
//
// Two kinds of moments: exactly after the k-th write of a transition (the binary's fault
// injection, SHARDSCALER_FAULT_KILL_AFTER_WRITES=k, makes it SIGKILL itself), and at a delay
// after `kubectl scale` returned (an outside kill -9, wherever the process happens to be).
#include <chrono>
#include <thread>

#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

struct CrashMoment {
  std::optional<int> after_writes;
  std::optional<std::chrono::milliseconds> after_delay;

  std::string describe() const {
    return after_writes ? "SIGKILL after write " + std::to_string(*after_writes)
                        : "kill -9 " + std::to_string(after_delay->count()) + " ms after scale";
  }
};

class CrashTest : public ShardSetScenario {
 protected:
  // What was there when the process died, for the log: it shows which moments were hit.
  std::string snapshot() {
    Json target = prometheus();
    int detached = 0;
    for (const auto& s : statefulSets()) detached += s.retained;
    const bool paused_by_us = target["metadata"]
                                  .value("annotations", Json::object())
                                  .contains("shardscaler.io/paused-by");
    return "target shards=" + target["spec"].value("shards", Json(0)).dump() +
           (paused_by_us ? " paused-by-shardscaler" : "") + " retained=" + std::to_string(detached);
  }

  // Scales to `to` and crashes shardscaler at `moment`; returns the state it left behind.
  std::string crashDuring(int to, const CrashMoment& moment) {
    shardscaler_->kill9();
    if (moment.after_writes) {
      shardscaler_->start(
          {"SHARDSCALER_FAULT_KILL_AFTER_WRITES=" + std::to_string(*moment.after_writes)});
    } else {
      shardscaler_->start();
    }
    // Let it sync before the change, so the kill lands in the transition, not the start-up.
    EXPECT_TRUE(waitFor("shardscaler ready", [&](std::string*) {
      return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
    }));
    scaleWithKubectl(to);
    if (moment.after_writes) {
      // It dies by itself after the k-th write; a transition with fewer writes leaves it alive.
      test_kit::eventually(10s, kPoll, [&](std::string*) { return !shardscaler_->running(); });
    } else {
      std::this_thread::sleep_for(*moment.after_delay);
    }
    shardscaler_->kill9();
    std::string left = snapshot();
    shardscaler_->start();
    return left;
  }

  void expectNothingDeleted(const std::set<std::string>& uids) {
    EXPECT_EQ(statefulSetUids(), uids) << "a StatefulSet was deleted or replaced";
    EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty()) << "the operator deleted a shard";
  }
};

TEST_F(CrashTest, ScaleDownAndScaleUpSurviveKillsAtAnyMoment) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  const auto uids = statefulSetUids();
  ASSERT_EQ(uids.size(), 4u);

  // A scale-down 4 -> 2 writes: pause, detach 2, detach 3, set shards + resume.
  const std::vector<CrashMoment> down = {
      {.after_writes = 1},  {.after_writes = 2},   {.after_writes = 3},   {.after_writes = 4},
      {.after_delay = 0ms}, {.after_delay = 15ms}, {.after_delay = 40ms},
  };
  // A scale-up 2 -> 3 over retained shards writes: pause, re-attach 2, set shards + resume.
  const std::vector<CrashMoment> up = {
      {.after_writes = 1}, {.after_writes = 2}, {.after_delay = 0ms}, {.after_delay = 20ms}};

  int runs = 0;
  for (const auto& moment : down) {
    SCOPED_TRACE("scale-down 4 -> 2, " + moment.describe());
    std::string left = crashDuring(2, moment);
    std::cout << "[ crash    ] scale-down, " << moment.describe() << ": left " << left << "\n";
    ASSERT_TRUE(waitForSettled(2, 2));
    expectNothingDeleted(uids);
    for (int i : {2, 3}) EXPECT_NE(statefulSet(i)->deletion_timestamp, "") << "shard " << i;
    ++runs;
    // Back to 4 (re-attaching both) for the next run.
    scaleWithKubectl(4);
    ASSERT_TRUE(waitForSettled(4, 0));
    expectNothingDeleted(uids);
  }

  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  for (const auto& moment : up) {
    SCOPED_TRACE("scale-up 2 -> 3, " + moment.describe());
    const std::string deadline3 = statefulSet(3)->deletion_timestamp;
    std::string left = crashDuring(3, moment);
    std::cout << "[ crash    ] scale-up, " << moment.describe() << ": left " << left << "\n";
    ASSERT_TRUE(waitForSettled(3, 1));
    expectNothingDeleted(uids);
    EXPECT_TRUE(statefulSet(2)->attached);
    EXPECT_EQ(statefulSet(3)->deletion_timestamp, deadline3) << "shard 3 kept its deadline";
    ++runs;
    scaleWithKubectl(2);
    ASSERT_TRUE(waitForSettled(2, 2));
    expectNothingDeleted(uids);
  }
  EXPECT_GE(runs, 10);
}

}  // namespace
}  // namespace shardscaler::e2e
