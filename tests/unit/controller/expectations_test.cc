// Expectations and RecordingClient: which watch events only echo a reconcile's own writes, and
// that every other event (anyone else's write, a resync, another reconcile's write) is never
// taken for one; and the floor a ShardSet's caches must reach before a plan from them.
#include "shardscaler/controller/expectations.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "shardscaler/planner/naming.h"

namespace shardscaler::controller {
namespace {

using k8s::Json;

Json object(const std::string& ns, const std::string& name, const std::string& rv) {
  return Json{{"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", rv}}}};
}

const k8s::Resource kPrometheuses = planner::targetResource(planner::TargetKind::Prometheus);

// The writer of the write that the update event old_rv -> new_rv of a Prometheus echoes.
std::optional<std::string> echo(Expectations& writes, const std::string& ns,
                                const std::string& name, const std::string& old_rv,
                                const std::string& new_rv) {
  return writes.echoWriter(kPrometheuses, object(ns, name, old_rv), object(ns, name, new_rv));
}

// Answers every write with the object at the next resourceVersion, or with `fail` when set.
class AnsweringClient final : public k8s::KubeClient {
 public:
  std::optional<k8s::Error> fail;
  int next_rv = 100;
  int reads = 0;

  k8s::Result<Json> get(const k8s::Resource&, const std::string& ns, const std::string& name,
                        const std::string&) override {
    ++reads;
    return object(ns, name, "1");
  }
  k8s::Result<Json> list(const k8s::Resource&, const std::string&,
                         const k8s::ListOptions&) override {
    ++reads;
    return Json{{"items", Json::array()}};
  }
  k8s::Result<Json> create(const k8s::Resource&, const std::string& ns, const Json& obj) override {
    return answer(ns, obj["metadata"]["name"].get<std::string>());
  }
  k8s::Result<Json> update(const k8s::Resource&, const std::string& ns, const Json& obj,
                           const std::string&) override {
    return answer(ns, obj["metadata"]["name"].get<std::string>());
  }
  k8s::Result<Json> patch(const k8s::Resource&, const std::string& ns, const std::string& name,
                          k8s::PatchType, const Json&, const std::string&) override {
    return answer(ns, name);
  }
  k8s::Result<Json> remove(const k8s::Resource&, const std::string& ns, const std::string& name,
                           const k8s::DeleteOptions&) override {
    return answer(ns, name);
  }
  k8s::Result<void> watch(const k8s::Resource&, const std::string&, const k8s::WatchOptions&,
                          const k8s::WatchHandler&, const std::atomic<bool>*) override {
    return {};
  }

 private:
  k8s::Result<Json> answer(const std::string& ns, const std::string& name) {
    if (fail) return std::unexpected(*fail);
    return object(ns, name, std::to_string(next_rv++));
  }
};

TEST(Expectations, TheEchoOfAWriteNamesItsWriterOnce) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  EXPECT_EQ(writes.pendingEchoes(), 1u);
  auto writer = echo(writes, "mon", "main", "9", "10");
  ASSERT_TRUE(writer);
  EXPECT_EQ(*writer, "mon/a");
  EXPECT_EQ(writes.pendingEchoes(), 0u);
  // The same version again (a relist that saw it already) is no longer an echo.
  EXPECT_FALSE(echo(writes, "mon", "main", "9", "10"));
}

TEST(Expectations, AnotherVersionIsSomeoneElsesWrite) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  // The operator wrote version 11 after ours, and version 9 before it: neither is ours.
  EXPECT_FALSE(echo(writes, "mon", "main", "8", "9"));
  EXPECT_FALSE(echo(writes, "mon", "main", "10", "11"));
}

TEST(Expectations, OnlyTheSameObjectOfTheSameResource) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  const k8s::Resource agents{"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
  EXPECT_FALSE(writes.echoWriter(agents, object("mon", "main", "9"), object("mon", "main", "10")));
  EXPECT_FALSE(echo(writes, "mon", "other", "9", "10"));
  EXPECT_FALSE(echo(writes, "team", "main", "9", "10"));
  EXPECT_TRUE(echo(writes, "mon", "main", "9", "10"));
}

TEST(Expectations, AResyncIsNeverAnEcho) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  EXPECT_FALSE(echo(writes, "mon", "main", "10", "10"));
  EXPECT_EQ(writes.pendingEchoes(), 1u);
}

TEST(Expectations, SeveralWritesBeforeTheirEchoes) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  writes.recordWrite(kPrometheuses, object("mon", "main", "12"), "mon/b");
  EXPECT_EQ(*echo(writes, "mon", "main", "9", "10"), "mon/a");
  // Someone else's version between ours is not taken for either.
  EXPECT_FALSE(echo(writes, "mon", "main", "10", "11"));
  EXPECT_EQ(*echo(writes, "mon", "main", "11", "12"), "mon/b");
  EXPECT_EQ(writes.pendingEchoes(), 0u);
}

TEST(Expectations, AMissedEchoDropsOnlyOlderRecords) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  writes.recordWrite(kPrometheuses, object("mon", "main", "12"), "mon/a");
  // A relist jumped from 9 to 12: the echo of 10 will never come.
  EXPECT_TRUE(echo(writes, "mon", "main", "9", "12"));
  EXPECT_EQ(writes.pendingEchoes(), 0u);
}

TEST(Expectations, KeepsABoundedNumberPerObject) {
  Expectations writes;
  for (int rv = 1; rv <= 10; ++rv) {
    writes.recordWrite(kPrometheuses, object("mon", "main", std::to_string(rv)), "mon/a");
  }
  // The oldest are forgotten: their echoes, should they come, queue as any event does.
  EXPECT_FALSE(echo(writes, "mon", "main", "0", "1"));
  const std::string newest_kept = std::to_string(10 - Expectations::kPerObject + 1);
  EXPECT_TRUE(echo(writes, "mon", "main", "0", newest_kept));
}

TEST(Expectations, ForgetOnDelete) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, object("mon", "main", "10"), "mon/a");
  writes.forgetObject(kPrometheuses, object("mon", "main", "10"));
  EXPECT_EQ(writes.pendingEchoes(), 0u);
  EXPECT_FALSE(echo(writes, "mon", "main", "9", "10"));
}

TEST(Expectations, AnAnswerWithoutVersionIsNotRecorded) {
  Expectations writes;
  writes.recordWrite(kPrometheuses, Json{{"kind", "Status"}, {"status", "Success"}}, "mon/a");
  EXPECT_EQ(writes.pendingEchoes(), 0u);
}

TEST(RecordingClient, RecordsSuccessfulWritesAsItsWritersOnly) {
  AnsweringClient inner;
  Expectations writes;
  RecordingClient client(inner, writes, "mon/a");
  k8s::KubeClient& kube = client;

  ASSERT_TRUE(kube.patch(kPrometheuses, "mon", "main", k8s::PatchType::Merge, Json::object()));
  ASSERT_TRUE(kube.get(kPrometheuses, "mon", "main"));
  ASSERT_TRUE(kube.list(kPrometheuses, "mon"));
  inner.fail = k8s::Error{.kind = k8s::ErrorKind::Conflict,
                          .http_status = 409,
                          .reason = {},
                          .message = "conflict",
                          .retry_after = {}};
  EXPECT_FALSE(kube.patch(kPrometheuses, "mon", "other", k8s::PatchType::Merge, Json::object()));
  inner.fail.reset();
  EXPECT_EQ(inner.reads, 2);
  EXPECT_EQ(writes.pendingEchoes(), 1u);  // the patch of main; reads and the failure are not
  auto writer = echo(writes, "mon", "main", "99", "100");
  ASSERT_TRUE(writer);
  EXPECT_EQ(*writer, "mon/a");

  // Every kind of write counts: a foreground delete answers with the object it marked.
  ASSERT_TRUE(kube.create(kPrometheuses, "mon", object("mon", "new", "")));
  ASSERT_TRUE(kube.update(kPrometheuses, "mon", object("mon", "upd", "1")));
  ASSERT_TRUE(kube.remove(kPrometheuses, "mon", "gone"));
  EXPECT_EQ(writes.pendingEchoes(), 3u);
}

TEST(RecordingClient, EachReconcileItsOwnWriter) {
  AnsweringClient inner;
  Expectations writes;
  RecordingClient a_client(inner, writes, "mon/a");
  RecordingClient b_client(inner, writes, "mon/b");
  k8s::KubeClient& a = a_client;
  k8s::KubeClient& b = b_client;
  // b writes from a thread of its own, as the applier sends adjacent writes.
  std::thread other([&] { ASSERT_TRUE(b.create(kPrometheuses, "mon", object("mon", "t", ""))); });
  other.join();
  ASSERT_TRUE(a.patch(kPrometheuses, "mon", "t", k8s::PatchType::Merge, Json::object()));
  EXPECT_EQ(*echo(writes, "mon", "t", "1", "100"), "mon/b");
  EXPECT_EQ(*echo(writes, "mon", "t", "100", "101"), "mon/a");
}

TEST(Expectations, TheNewestStatefulSetWriteIsTheReadFloor) {
  Expectations writes;
  EXPECT_EQ(writes.newestStatefulSetWrite(), 0u);
  const k8s::Resource sts = k8s::resources::statefulSets();
  writes.recordWrite(sts, object("mon", "s-1", "120"), "mon/a");
  writes.recordWrite(sts, object("mon", "s-2", "110"), "mon/b");  // answered late: an older version
  EXPECT_EQ(writes.newestStatefulSetWrite(), 120u);
  writes.recordWrite(kPrometheuses, object("mon", "main", "130"), "mon/a");  // not a StatefulSet
  EXPECT_EQ(writes.newestStatefulSetWrite(), 120u);
  // A version that cannot be ordered names no floor: the reads after it are quorum reads.
  writes.recordWrite(sts, object("mon", "s-3", "not-a-number"), "mon/a");
  EXPECT_EQ(writes.newestStatefulSetWrite(), std::nullopt);
  writes.recordWrite(sts, object("mon", "s-4", "140"), "mon/a");
  EXPECT_EQ(writes.newestStatefulSetWrite(), std::nullopt);
}

TEST(Expectations, AShardSetWithoutARecordHasTheZeroFloor) {
  const Expectations expectations;
  const auto floor = expectations.cacheFloor("mon/a");
  ASSERT_TRUE(floor.has_value());
  EXPECT_EQ(floor->target_version, 0u);
  EXPECT_EQ(floor->shards_version, 0u);
  EXPECT_TRUE(floor->shownBy("1", "1"));
}

TEST(Expectations, TheFloorIsPerShardSetAndTheLastWordCounts) {
  Expectations expectations;
  expectations.expectCaches("mon/a", {.target_version = 120, .shards_version = 130});
  expectations.expectLiveRead("mon/b");
  ASSERT_TRUE(expectations.cacheFloor("mon/a"));
  EXPECT_EQ(expectations.cacheFloor("mon/a")->target_version, 120u);
  EXPECT_FALSE(expectations.cacheFloor("mon/b")) << "read live next";

  expectations.expectLiveRead("mon/a");
  EXPECT_FALSE(expectations.cacheFloor("mon/a"));
  expectations.expectCaches("mon/b", {.target_version = 5});
  ASSERT_TRUE(expectations.cacheFloor("mon/b"));
  EXPECT_EQ(expectations.cacheFloor("mon/b")->target_version, 5u);

  expectations.forgetShardSet("mon/a");
  ASSERT_TRUE(expectations.cacheFloor("mon/a")) << "a ShardSet made again starts from zero";
  EXPECT_EQ(expectations.cacheFloor("mon/a")->target_version, 0u);
}

TEST(Expectations, CachesShowAFloorOnlyWithOrderedVersionsAtLeastAsNew) {
  const Expectations::CacheFloor floor{.target_version = 120, .shards_version = 130};
  EXPECT_TRUE(floor.shownBy("120", "130"));
  EXPECT_TRUE(floor.shownBy("121", "200"));
  EXPECT_FALSE(floor.shownBy("119", "130")) << "an older target";
  EXPECT_FALSE(floor.shownBy("120", "129")) << "a shard cache that has not seen the newest shard";
  // A version that is not a number cannot be ordered: it proves nothing, also against zero.
  EXPECT_FALSE(floor.shownBy("not-a-number", "130"));
  EXPECT_FALSE(Expectations::CacheFloor{}.shownBy("1", ""));
}

}  // namespace
}  // namespace shardscaler::controller
