// OwnWrites and OwnWritesClient: which watch events only echo a reconcile's own writes, and
// that every other event (anyone else's write, a resync, another reconcile's write) is never
// taken for one.
#include "shardscaler/controller/own_writes.h"

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

TEST(OwnWrites, TheEchoOfAWriteNamesItsWriterOnce) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  EXPECT_EQ(writes.size(), 1u);
  auto writer = writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                  object("mon", "main", "9"), object("mon", "main", "10"));
  ASSERT_TRUE(writer);
  EXPECT_EQ(*writer, "mon/a");
  EXPECT_EQ(writes.size(), 0u);
  // The same version again (a relist that saw it already) is no longer an echo.
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "9"), object("mon", "main", "10")));
}

TEST(OwnWrites, AnotherVersionIsSomeoneElsesWrite) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  // The operator wrote version 11 after ours, and version 9 before it: neither is ours.
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "8"), object("mon", "main", "9")));
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "10"), object("mon", "main", "11")));
}

TEST(OwnWrites, OnlyTheSameObjectOfTheSameResource) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  const k8s::Resource agents{"monitoring.coreos.com", "v1alpha1", "prometheusagents", true};
  EXPECT_FALSE(writes.echoWriter(agents, object("mon", "main", "9"), object("mon", "main", "10")));
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "other", "9"), object("mon", "other", "10")));
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("team", "main", "9"), object("team", "main", "10")));
  EXPECT_TRUE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                object("mon", "main", "9"), object("mon", "main", "10")));
}

TEST(OwnWrites, AResyncIsNeverAnEcho) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "10"), object("mon", "main", "10")));
  EXPECT_EQ(writes.size(), 1u);
}

TEST(OwnWrites, SeveralWritesBeforeTheirEchoes) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "12"), "mon/b");
  EXPECT_EQ(*writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                               object("mon", "main", "9"), object("mon", "main", "10")),
            "mon/a");
  // Someone else's version between ours is not taken for either.
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "10"), object("mon", "main", "11")));
  EXPECT_EQ(*writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                               object("mon", "main", "11"), object("mon", "main", "12")),
            "mon/b");
  EXPECT_EQ(writes.size(), 0u);
}

TEST(OwnWrites, AMissedEchoDropsOnlyOlderRecords) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "12"), "mon/a");
  // A relist jumped from 9 to 12: the echo of 10 will never come.
  EXPECT_TRUE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                object("mon", "main", "9"), object("mon", "main", "12")));
  EXPECT_EQ(writes.size(), 0u);
}

TEST(OwnWrites, KeepsABoundedNumberPerObject) {
  OwnWrites writes;
  for (int rv = 1; rv <= 10; ++rv) {
    writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                  object("mon", "main", std::to_string(rv)), "mon/a");
  }
  // The oldest are forgotten: their echoes, should they come, queue as any event does.
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "0"), object("mon", "main", "1")));
  const std::string newest_kept = std::to_string(10 - OwnWrites::kPerObject + 1);
  EXPECT_TRUE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                object("mon", "main", "0"), object("mon", "main", newest_kept)));
}

TEST(OwnWrites, ForgetOnDelete) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"), "mon/a");
  writes.forget(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "10"));
  EXPECT_EQ(writes.size(), 0u);
  EXPECT_FALSE(writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                 object("mon", "main", "9"), object("mon", "main", "10")));
}

TEST(OwnWrites, AnAnswerWithoutVersionIsNotRecorded) {
  OwnWrites writes;
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                Json{{"kind", "Status"}, {"status", "Success"}}, "mon/a");
  EXPECT_EQ(writes.size(), 0u);
}

TEST(OwnWritesClient, RecordsSuccessfulWritesAsItsWritersOnly) {
  AnsweringClient inner;
  OwnWrites writes;
  OwnWritesClient client(inner, writes, "mon/a");
  k8s::KubeClient& kube = client;

  ASSERT_TRUE(kube.patch(planner::targetResource(planner::TargetKind::Prometheus), "mon", "main",
                         k8s::PatchType::Merge, Json::object()));
  ASSERT_TRUE(kube.get(planner::targetResource(planner::TargetKind::Prometheus), "mon", "main"));
  ASSERT_TRUE(kube.list(planner::targetResource(planner::TargetKind::Prometheus), "mon"));
  inner.fail = k8s::Error{.kind = k8s::ErrorKind::Conflict,
                          .http_status = 409,
                          .reason = {},
                          .message = "conflict",
                          .retry_after = {}};
  EXPECT_FALSE(kube.patch(planner::targetResource(planner::TargetKind::Prometheus), "mon", "other",
                          k8s::PatchType::Merge, Json::object()));
  inner.fail.reset();
  EXPECT_EQ(inner.reads, 2);
  EXPECT_EQ(writes.size(), 1u);  // the patch of main; reads and the failure are not
  auto writer = writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                                  object("mon", "main", "99"), object("mon", "main", "100"));
  ASSERT_TRUE(writer);
  EXPECT_EQ(*writer, "mon/a");

  // Every kind of write counts: a foreground delete answers with the object it marked.
  ASSERT_TRUE(kube.create(planner::targetResource(planner::TargetKind::Prometheus), "mon",
                          object("mon", "new", "")));
  ASSERT_TRUE(kube.update(planner::targetResource(planner::TargetKind::Prometheus), "mon",
                          object("mon", "upd", "1")));
  ASSERT_TRUE(kube.remove(planner::targetResource(planner::TargetKind::Prometheus), "mon", "gone"));
  EXPECT_EQ(writes.size(), 3u);
}

TEST(OwnWritesClient, EachReconcileItsOwnWriter) {
  AnsweringClient inner;
  OwnWrites writes;
  OwnWritesClient a_client(inner, writes, "mon/a");
  OwnWritesClient b_client(inner, writes, "mon/b");
  k8s::KubeClient& a = a_client;
  k8s::KubeClient& b = b_client;
  // b writes from a thread of its own, as the applier sends adjacent writes.
  std::thread other([&] {
    ASSERT_TRUE(b.create(planner::targetResource(planner::TargetKind::Prometheus), "mon",
                         object("mon", "t", "")));
  });
  other.join();
  ASSERT_TRUE(a.patch(planner::targetResource(planner::TargetKind::Prometheus), "mon", "t",
                      k8s::PatchType::Merge, Json::object()));
  EXPECT_EQ(*writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                               object("mon", "t", "1"), object("mon", "t", "100")),
            "mon/b");
  EXPECT_EQ(*writes.echoWriter(planner::targetResource(planner::TargetKind::Prometheus),
                               object("mon", "t", "100"), object("mon", "t", "101")),
            "mon/a");
}

TEST(OwnWrites, TheNewestStatefulSetWriteIsTheReadFloor) {
  OwnWrites writes;
  EXPECT_EQ(writes.newestStatefulSetWrite(), 0u);
  const k8s::Resource sts = k8s::resources::statefulSets();
  writes.record(sts, object("mon", "s-1", "120"), "mon/a");
  writes.record(sts, object("mon", "s-2", "110"), "mon/b");  // answered late: an older version
  EXPECT_EQ(writes.newestStatefulSetWrite(), 120u);
  writes.record(planner::targetResource(planner::TargetKind::Prometheus),
                object("mon", "main", "130"), "mon/a");  // not a StatefulSet
  EXPECT_EQ(writes.newestStatefulSetWrite(), 120u);
  // A version that cannot be ordered names no floor: the reads after it are quorum reads.
  writes.record(sts, object("mon", "s-3", "not-a-number"), "mon/a");
  EXPECT_EQ(writes.newestStatefulSetWrite(), std::nullopt);
  writes.record(sts, object("mon", "s-4", "140"), "mon/a");
  EXPECT_EQ(writes.newestStatefulSetWrite(), std::nullopt);
}

}  // namespace
}  // namespace shardscaler::controller
