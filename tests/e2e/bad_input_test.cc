// 5g: bad input. Each case gives a condition and an Event with a clear message, and no
// StatefulSet is deleted.
#include <chrono>

#include <gmock/gmock.h>

#include "shardscaler/e2e/scenario.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class BadInputTest : public ShardSetScenario {
 protected:
  // Waits for condition `type` with `status` and `reason`; returns its message.
  std::string waitForCondition(const std::string& type, const std::string& status,
                               const std::string& reason) {
    std::string message;
    EXPECT_TRUE(waitFor(type + "=" + status + " (" + reason + ")", [&](std::string* seen) {
      auto c = condition(type);
      *seen = c ? c->dump() : "no condition";
      if (!c || c->value("status", "") != status || c->value("reason", "") != reason) {
        return false;
      }
      message = c->value("message", "");
      return true;
    }));
    return message;
  }

  std::string waitForEvent(const std::string& reason) {
    std::string found;
    EXPECT_TRUE(waitFor("a " + reason + " Event", [&](std::string* seen) {
      for (const auto& e : shardSetEvents()) {
        if (e.starts_with(reason + ": ")) {
          found = e;
          return true;
        }
      }
      *seen = ::testing::PrintToString(shardSetEvents());
      return false;
    }));
    return found;
  }

  // A Prometheus with `shards` running shards, before the ShardSet under test exists.
  std::set<std::string> runningTarget(int shards) {
    createPrometheus(shards);
    std::set<std::string> uids;
    EXPECT_TRUE(waitFor("the operator's StatefulSets", [&](std::string*) {
      uids = statefulSetUids();
      return uids.size() == static_cast<size_t>(shards);
    }));
    return uids;
  }

  void expectUntouched(const std::set<std::string>& uids, int shards) {
    // Give a wrong decision time to happen before looking.
    std::this_thread::sleep_for(2s);
    EXPECT_EQ(statefulSetUids(), uids);
    EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
    EXPECT_EQ(prometheus()["spec"]["shards"], shards);
    EXPECT_FALSE(prometheus()["spec"].value("paused", false));
  }
};

TEST_F(BadInputTest, MissingTarget) {
  auto uids = runningTarget(2);
  applyShardSet({.target_name = "absent", .shards = 1, .when_scaled = "Delete"});
  auto message = waitForCondition("Degraded", "True", "TargetNotFound");
  EXPECT_THAT(message, HasSubstr("absent"));
  EXPECT_THAT(waitForEvent("TargetNotFound"), HasSubstr("absent"));
  expectUntouched(uids, 2);
}

TEST_F(BadInputTest, ShardsAboveMaxShardsAreClamped) {
  auto uids = runningTarget(2);
  applyShardSet({.shards = 5, .max_shards = 3, .when_scaled = "Retain"});
  ASSERT_TRUE(waitForSettled(3, 0));
  EXPECT_THAT(waitForEvent("ScaleClamped"), HasSubstr("maxShards"));
  auto ready = condition("Ready");
  ASSERT_TRUE(ready);
  EXPECT_THAT(ready->value("message", ""), HasSubstr("maxShards 3"));
  // The two shards that were there are still the same objects.
  auto now = statefulSetUids();
  for (const auto& uid : uids) EXPECT_TRUE(now.contains(uid));
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
}

TEST_F(BadInputTest, InvalidRetentionPeriod) {
  auto uids = runningTarget(3);
  // Passes the CRD's pattern, but is out of range for a Prometheus duration.
  applyShardSet({.shards = 1, .when_scaled = "Retain", .retention_period = "300000000y"});
  auto message = waitForCondition("Degraded", "True", "InvalidSpec");
  EXPECT_THAT(message, HasSubstr("retentionPeriod"));
  EXPECT_THAT(waitForEvent("InvalidSpec"), HasSubstr("retentionPeriod"));
  expectUntouched(uids, 3);
}

TEST_F(BadInputTest, GarbageDeletionTimestampIsKept) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  // Someone writes garbage into shard 2's deadline (the annotation shardscaler reads first), and
  // a deadline long past into all three of shard 3's (the operator's own one included: an
  // unexpired operator deadline alone keeps a shard).
  auto garbage = kubectl("annotate --overwrite sts prometheus-main-shard-2 -n " + ns_ +
                         " shardscaler.io/deletion-deadline=soon-ish");
  ASSERT_EQ(garbage.exit_code, 0) << garbage.err;
  auto past = kubectl("annotate --overwrite sts prometheus-main-shard-3 -n " + ns_ +
                      " shardscaler.io/deletion-deadline=2020-01-01T00:00:00Z"
                      " operator.prometheus.io/deletion-deadline=2020-01-01T00:00:00Z"
                      " operator.prometheus.io/deletion-timestamp=2020-01-01T00:00:00Z");
  ASSERT_EQ(past.exit_code, 0) << past.err;

  auto message = waitForCondition("Degraded", "True", "InvalidDeletionTimestamp");
  EXPECT_THAT(message, HasSubstr("prometheus-main-shard-2"));
  EXPECT_THAT(message, HasSubstr("never deleted on doubt"));
  EXPECT_THAT(waitForEvent("InvalidDeletionTimestamp"), HasSubstr("soon-ish"));
  // The expired one goes, the garbage one stays.
  ASSERT_TRUE(waitFor("shard 3 deleted", [&](std::string*) { return !statefulSet(3); }));
  std::this_thread::sleep_for(2s);
  auto s2 = statefulSet(2);
  ASSERT_TRUE(s2) << "the StatefulSet with a garbage deadline was deleted";
  EXPECT_TRUE(s2->retained);
  EXPECT_FALSE(s2->being_deleted);
}

}  // namespace
}  // namespace shardscaler::e2e
