// The transitions of docs/design.md end to end: kubectl scale on a ShardSet carried out on a
// Prometheus run by the operator emulator, with Retain (detach, re-attach, expiry) and Delete.
#include <chrono>

#include "shardscaler/e2e/scenario.h"
#include "shardscaler/planner/deadline.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

class ScaleTest : public ShardSetScenario {};

std::chrono::system_clock::time_point deadlineOf(const StatefulSetView& s) {
  auto parsed = k8s::parseRfc3339(s.deletion_timestamp);
  EXPECT_TRUE(parsed.has_value()) << s.name << ": " << s.deletion_timestamp;
  return parsed ? std::chrono::system_clock::time_point(parsed->seconds)
                : std::chrono::system_clock::time_point{};
}

// 5a and 5b: Retain with a 1h period, 4 -> 2 with kubectl scale, then 2 -> 3.
TEST_F(ScaleTest, RetainKeepsRemovedShardsAndReattachesThemOnScaleUp) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
  ASSERT_TRUE(waitForSettled(4, 0));
  const auto uids_before = statefulSetUids();
  ASSERT_EQ(uids_before.size(), 4u);

  const size_t actions_before = emulator_->actions().size();
  const auto scaled_at = std::chrono::system_clock::now();
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));

  // Shards 2 and 3: still there, detached, annotated with a deadline of about now + 1h.
  for (int i : {2, 3}) {
    auto s = statefulSet(i);
    ASSERT_TRUE(s) << "shard " << i << " was deleted";
    EXPECT_FALSE(s->attached) << s->name;
    EXPECT_TRUE(s->retained) << s->name;
    auto until = deadlineOf(*s) - scaled_at;
    EXPECT_GT(until, 1h - 2min) << s->name << " " << s->deletion_timestamp;
    EXPECT_LT(until, 1h + 2min) << s->name << " " << s->deletion_timestamp;
  }
  EXPECT_EQ(statefulSetUids(), uids_before) << "a StatefulSet was deleted or replaced";

  // The target: 2 shards, not paused. The ShardSet: 2 active shards.
  Json target = prometheus();
  EXPECT_EQ(target["spec"]["shards"], 2);
  EXPECT_EQ(target["spec"].value("paused", false), false);
  EXPECT_EQ(shardSet()["status"]["shards"], 2);

  // kubectl get pods -l <status.selector> returns exactly replica 0 of shards 0 and 1.
  const std::string selector = shardSet()["status"]["selector"];
  auto pods = kubectl("get pods -n " + ns_ + " -l '" + selector +
                      "' -o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'");
  ASSERT_EQ(pods.exit_code, 0) << pods.err;
  EXPECT_EQ(pods.out, "prometheus-main-0\nprometheus-main-shard-1-0\n");

  // The emulator neither deleted nor re-attached (nor wrote at all) the retained ones.
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  // Writes before the emulator's first paused sync belong to syncs that started before the
  // pause, while shards 2 and 3 were still active (its sync of shardscaler's guard labels, which
  // may still be running when the scale is sent); from the pause on, nothing touches them.
  const auto actions = emulator_->actions();
  size_t paused = actions.size();
  for (size_t i = actions_before; i < actions.size() && paused == actions.size(); ++i) {
    const auto& a = actions[i];
    if (a.verb == "sync" && a.ns == ns_ && a.outcome == "paused") paused = i;
  }
  ASSERT_LT(paused, actions.size()) << "the emulator never saw the target paused";
  for (size_t i = paused; i < actions.size(); ++i) {
    const auto& a = actions[i];
    EXPECT_FALSE(a.isWrite() && a.kind == "StatefulSet" && a.shard && *a.shard >= 2)
        << "the emulator wrote retained " << a.name << ": " << a.raw.dump();
  }
  auto events = shardSetEvents();
  EXPECT_EQ(std::ranges::count_if(
                events, [](const std::string& e) { return e.starts_with("ShardRetained: "); }),
            2)
      << ::testing::PrintToString(events);

  // 5b: 2 -> 3 re-attaches shard 2; shard 3 stays retained.
  const auto shard3_deadline = statefulSet(3)->deletion_timestamp;
  scaleWithKubectl(3);
  ASSERT_TRUE(waitForSettled(3, 1));
  auto s2 = statefulSet(2);
  ASSERT_TRUE(s2);
  EXPECT_TRUE(s2->attached);
  EXPECT_FALSE(s2->retained);
  EXPECT_EQ(s2->deletion_timestamp, "");
  auto s3 = statefulSet(3);
  ASSERT_TRUE(s3);
  EXPECT_TRUE(s3->retained);
  EXPECT_EQ(s3->deletion_timestamp, shard3_deadline);
  EXPECT_EQ(statefulSetUids(), uids_before);
  // The emulator owns shard 2 again: it syncs it (its informer sees it), and still deleted
  // nothing.
  EXPECT_TRUE(emulator_->waitForAction(30s, [](const testenv::EmulatorAction& a) {
    return a.kind == "StatefulSet" && a.shard == 2 && a.verb == "update";
  })) << "the emulator never updated the re-attached shard 2";
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
}

// No kubelet here: the shards' pods never run, so a due shard drains at once (a pod that never
// ran, without volumes, holds nothing), and the survivors never report a configuration reload, so
// a drained shard goes once the reload's floor (10 s in these tests) has passed.
constexpr auto kDrainedWithoutAReload = 90s;

// 5c: a retention period of a few seconds; the retained StatefulSets and their pods go away
// through the garbage collector once the deadline passed.
TEST_F(ScaleTest, RetainedShardsAreDeletedAfterTheirDeadline) {
  createPrometheus(3);
  applyShardSet({.shards = 3, .when_scaled = "Retain", .retention_period = "6s"});
  ASSERT_TRUE(waitForSettled(3, 0));
  ASSERT_TRUE(waitFor("pod of shard 2", [&](std::string*) {
    return kubectl("get pod prometheus-main-shard-2-0 -n " + ns_).exit_code == 0;
  }));

  scaleWithKubectl(1);
  ASSERT_TRUE(waitForSettled(1, 2));
  const auto detached_at = std::chrono::steady_clock::now();

  ASSERT_TRUE(waitFor(
      "shards 1 and 2 and their pods to be gone",
      [&](std::string* seen) {
        auto sets = statefulSets();
        auto pods = kubectl("get pods -n " + ns_ + " -o name");
        auto progressing = condition("Progressing");
        *seen = "statefulsets=" + std::to_string(sets.size()) + " pods=" + pods.out +
                " Progressing=" + (progressing ? progressing->dump() : "none");
        return sets.size() == 1 && sets[0].index == 0 &&
               pods.out.find("shard-1") == std::string::npos &&
               pods.out.find("shard-2") == std::string::npos;
      },
      kDrainedWithoutAReload));
  // Not before the deadline (6 s, written in whole seconds).
  EXPECT_GE(std::chrono::steady_clock::now() - detached_at, 4s);
  ASSERT_TRUE(waitForSettled(1, 0));
  auto events = shardSetEvents();
  // No URL: the drain read the shards' own pods, none of which ever ran (no kubelet here), so
  // each had nothing to ship.
  EXPECT_EQ(std::ranges::count_if(
                events, [](const std::string& e) { return e.starts_with("ShardDrained: "); }),
            2)
      << ::testing::PrintToString(events);
}

// 5d: Delete policy: the excess StatefulSets are deleted.
TEST_F(ScaleTest, DeletePolicyDeletesExcessShards) {
  createPrometheus(4);
  applyShardSet({.shards = 4, .when_scaled = "Delete"});
  ASSERT_TRUE(waitForSettled(4, 0));
  scaleWithKubectl(2);
  // Detached, then drained (their pods never ran), then deleted once the survivors' reload floor
  // passed.
  ASSERT_TRUE(waitFor(
      "only shards 0 and 1 left",
      [&](std::string* seen) {
        auto sets = statefulSets();
        auto progressing = condition("Progressing");
        *seen = std::to_string(sets.size()) +
                " StatefulSets, Progressing=" + (progressing ? progressing->dump() : "none");
        return sets.size() == 2 && sets[0].index == 0 && sets[1].index == 1;
      },
      kDrainedWithoutAReload));
  ASSERT_TRUE(waitForSettled(2, 0));
  for (const auto& s : statefulSets()) EXPECT_FALSE(s.retained) << s.name;
}

}  // namespace
}  // namespace shardscaler::e2e
