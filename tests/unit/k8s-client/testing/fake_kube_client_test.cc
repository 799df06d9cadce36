// The FakeKubeClient answers as the API server would: metadata bookkeeping, preconditions,
// finalizers, patches, watches, injected faults and the call record.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/field_mask.h"
#include "shardscaler/k8s_client/informer.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"

namespace shardscaler::k8s::testing {
namespace {

const Resource kSts = resources::statefulSets();

Json sts(const std::string& name, Json labels = Json::object()) {
  return Json{{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", name}, {"namespace", "ns"}, {"labels", labels}}},
              {"spec", {{"replicas", 1}}}};
}

TEST(FakeKubeClient, CreateStampsMetadataAndRefusesADuplicate) {
  FakeKubeClient fake;
  auto created = fake.create(kSts, "ns", sts("a"));
  ASSERT_TRUE(created) << created.error().describe();
  const Json& md = (*created)["metadata"];
  EXPECT_FALSE(md.value("uid", "").empty());
  EXPECT_FALSE(md.value("resourceVersion", "").empty());
  EXPECT_EQ(md.value("generation", 0), 1);
  EXPECT_TRUE(md.contains("creationTimestamp"));
  auto again = fake.create(kSts, "ns", sts("a"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, ErrorKind::AlreadyExists);
  EXPECT_EQ(again.error().http_status, 409);
  EXPECT_EQ(again.error().reason, "AlreadyExists");
}

TEST(FakeKubeClient, GetOfAMissingObjectIsNotFound) {
  FakeKubeClient fake;
  auto got = fake.get(kSts, "ns", "missing");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, ErrorKind::NotFound);
  EXPECT_EQ(got.error().message, "statefulsets.apps \"missing\" not found");
}

TEST(FakeKubeClient, UpdateWithAStaleResourceVersionConflictsAndSpecChangesBumpGeneration) {
  FakeKubeClient fake;
  Json object = *fake.create(kSts, "ns", sts("a"));
  Json changed = object;
  changed["spec"]["replicas"] = 3;
  auto updated = fake.update(kSts, "ns", changed);
  ASSERT_TRUE(updated) << updated.error().describe();
  EXPECT_EQ((*updated)["metadata"]["generation"], 2);
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], object["metadata"]["resourceVersion"]);
  auto stale = fake.update(kSts, "ns", changed);  // carries the old resourceVersion
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().kind, ErrorKind::Conflict);
  // A label change is not a spec change.
  Json labelled = *updated;
  labelled["metadata"]["labels"]["x"] = "y";
  EXPECT_EQ((*fake.update(kSts, "ns", labelled))["metadata"]["generation"], 2);
}

TEST(FakeKubeClient, MergePatchHonoursResourceVersionAndUidPreconditions) {
  FakeKubeClient fake;
  Json object = *fake.create(kSts, "ns", sts("a"));
  const std::string uid = object["metadata"]["uid"];
  const std::string rv = object["metadata"]["resourceVersion"];
  auto ok =
      fake.patch(kSts, "ns", "a", PatchType::Merge,
                 {{"metadata", {{"uid", uid}, {"resourceVersion", rv}, {"labels", {{"k", "v"}}}}}});
  ASSERT_TRUE(ok) << ok.error().describe();
  EXPECT_EQ((*ok)["metadata"]["labels"]["k"], "v");
  auto stale = fake.patch(kSts, "ns", "a", PatchType::Merge,
                          {{"metadata", {{"resourceVersion", rv}, {"labels", {{"k", "w"}}}}}});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().kind, ErrorKind::Conflict);
  auto other = fake.patch(kSts, "ns", "a", PatchType::Merge,
                          {{"metadata", {{"uid", "someone-else"}, {"labels", {{"k", "w"}}}}}});
  ASSERT_FALSE(other);
  // As the API server: the uid is immutable, so a uid "precondition" fails validation.
  EXPECT_EQ(other.error().kind, ErrorKind::Invalid);
  EXPECT_NE(other.error().message.find("metadata.uid"), std::string::npos);
  EXPECT_EQ((*fake.find(kSts, "ns", "a"))["metadata"]["labels"]["k"], "v");
}

TEST(FakeKubeClient, JsonPatchTestOperationFailsWith422AndStatusSubresourceChangesOnlyStatus) {
  FakeKubeClient fake;
  Json object = *fake.create(kSts, "ns", sts("a"));
  auto failed = fake.patch(
      kSts, "ns", "a", PatchType::Json,
      Json::array({{{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", "1"}},
                   {{"op", "add"}, {"path", "/spec/replicas"}, {"value", 5}}}));
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().http_status, 422);
  auto status = fake.patch(kSts, "ns", "a", PatchType::Json,
                           Json::array({{{"op", "add"}, {"path", "/status"}, {"value", {{"r", 1}}}},
                                        {{"op", "add"}, {"path", "/spec/replicas"}, {"value", 5}}}),
                           "status");
  ASSERT_TRUE(status) << status.error().describe();
  EXPECT_EQ((*status)["status"]["r"], 1);
  EXPECT_EQ((*status)["spec"]["replicas"], 1);
  // And the main resource leaves status alone.
  auto main = fake.patch(kSts, "ns", "a", PatchType::Merge, {{"status", {{"r", 2}}}});
  ASSERT_TRUE(main);
  EXPECT_EQ((*main)["status"]["r"], 1);
}

TEST(FakeKubeClient, DeleteHonoursPreconditionsAndFinalizers) {
  FakeKubeClient fake;
  Json object = sts("a");
  object["metadata"]["finalizers"] = {"example.com/keep"};
  object = *fake.create(kSts, "ns", object);
  auto wrong_uid = fake.remove(kSts, "ns", "a", {.precondition_uid = "nope"});
  ASSERT_FALSE(wrong_uid);
  EXPECT_EQ(wrong_uid.error().kind, ErrorKind::Conflict);
  EXPECT_NE(wrong_uid.error().message.find("Precondition failed: UID"), std::string::npos);
  auto wrong_rv = fake.remove(kSts, "ns", "a", {.precondition_resource_version = "1"});
  ASSERT_FALSE(wrong_rv);
  EXPECT_EQ(wrong_rv.error().kind, ErrorKind::Conflict);

  auto marked = fake.remove(kSts, "ns", "a", {.precondition_uid = object["metadata"]["uid"]});
  ASSERT_TRUE(marked) << marked.error().describe();
  ASSERT_TRUE(fake.find(kSts, "ns", "a"));
  EXPECT_TRUE((*fake.find(kSts, "ns", "a"))["metadata"].contains("deletionTimestamp"));
  auto released = fake.patch(kSts, "ns", "a", PatchType::Json,
                             Json::array({{{"op", "remove"}, {"path", "/metadata/finalizers/0"}}}));
  ASSERT_TRUE(released) << released.error().describe();
  EXPECT_FALSE(fake.find(kSts, "ns", "a"));
}

TEST(FakeKubeClient, ListSelectsByLabelsAndPages) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a", {{"app", "x"}}));
  fake.put(kSts, sts("b", {{"app", "y"}}));
  fake.put(kSts, sts("c", {{"app", "x"}}));
  auto xs = listAll(fake, kSts, "ns", {.label_selector = "app=x", .limit = 1});
  ASSERT_TRUE(xs) << xs.error().describe();
  ASSERT_EQ((*xs)["items"].size(), 2U);
  EXPECT_EQ((*xs)["items"][1]["metadata"]["name"], "c");
  auto not_y = fake.list(kSts, "ns", {.label_selector = "app notin (y)"});
  EXPECT_EQ((*not_y)["items"].size(), 2U);
  auto bad = fake.list(kSts, "ns", {.label_selector = "app in (x"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::BadRequest);
}

TEST(FakeKubeClient, FieldSelectorsSelectByNameAndNamespaceEqualOrNot) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a"));
  fake.put(kSts, sts("b"));
  auto not_a = fake.list(kSts, "ns", {.field_selector = "metadata.name!=a"});
  ASSERT_TRUE(not_a) << not_a.error().describe();
  ASSERT_EQ((*not_a)["items"].size(), 1U);
  EXPECT_EQ((*not_a)["items"][0]["metadata"]["name"], "b");
  EXPECT_EQ((*fake.list(kSts, "", {.field_selector = "metadata.name==a"}))["items"].size(), 1U);
  EXPECT_TRUE(
      (*fake.list(kSts, "ns", {.field_selector = "metadata.namespace=other"}))["items"].empty());
  auto unknown = fake.list(kSts, "ns", {.field_selector = "spec.replicas=1"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::BadRequest);
}

TEST(FakeKubeClient, TheCallRecordKeepsListAndWatchOptions) {
  FakeKubeClient fake;
  auto fields = std::make_shared<FieldMask>(FieldMask::keepNone());
  ASSERT_TRUE(fake.list(kSts, "ns",
                        {.label_selector = "app=x",
                         .field_selector = "metadata.name!=q",
                         .limit = 2,
                         .continue_token = "2",
                         .metadata_only = true,
                         .fields = fields}));
  std::atomic<bool> stop{true};  // returns as soon as it is open
  ASSERT_TRUE(fake.watch(
      kSts, "ns",
      {.resource_version = fake.currentResourceVersion(),
       .allow_bookmarks = false,
       .timeout_seconds = 7},
      [](WatchEvent&&) { return true; }, &stop));
  const auto lists = fake.calls({.verb = Verb::List});
  ASSERT_EQ(lists.size(), 1U);
  EXPECT_EQ(lists[0].list_options.label_selector, "app=x");
  EXPECT_EQ(lists[0].list_options.field_selector, "metadata.name!=q");
  EXPECT_EQ(lists[0].list_options.limit, 2);
  EXPECT_EQ(lists[0].list_options.continue_token, "2");
  EXPECT_TRUE(lists[0].list_options.metadata_only);
  EXPECT_EQ(lists[0].list_options.fields, fields);
  const auto watches = fake.calls({.verb = Verb::Watch});
  ASSERT_EQ(watches.size(), 1U);
  EXPECT_EQ(watches[0].watch_options.resource_version, fake.currentResourceVersion());
  EXPECT_FALSE(watches[0].watch_options.allow_bookmarks);
  EXPECT_EQ(watches[0].watch_options.timeout_seconds, 7);
}

TEST(FakeKubeClient, AFaultForEveryCallLastsWhileOtherCallsSucceed) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a"));
  fake.failNext({.verb = Verb::Get}, FakeKubeClient::kEveryCall, statusError(503, "down"));
  for (int i = 0; i < 50; ++i) {
    auto got = fake.get(kSts, "ns", "a");
    ASSERT_FALSE(got) << "call " << i;
    EXPECT_EQ(got.error().kind, ErrorKind::ServerError);
  }
  EXPECT_TRUE(fake.list(kSts, "ns"));
}

TEST(FakeKubeClient, InjectedFaultsAnswerTheMatchingCallsOnlyAndAreRecorded) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a"));
  fake.failNext({.verb = Verb::Get, .resource = "statefulsets"}, 2,
                statusError(429, "slow down", "", std::chrono::seconds(3)));
  EXPECT_TRUE(fake.list(kSts, "ns"));  // not a get
  auto first = fake.get(kSts, "ns", "a");
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().kind, ErrorKind::TooManyRequests);
  EXPECT_EQ(first.error().retry_after, std::chrono::seconds(3));
  EXPECT_FALSE(fake.get(kSts, "ns", "a"));
  EXPECT_TRUE(fake.get(kSts, "ns", "a"));
  const auto gets = fake.calls({.verb = Verb::Get});
  ASSERT_EQ(gets.size(), 3U);
  EXPECT_TRUE(gets[0].error);
  EXPECT_FALSE(gets[2].error);
  fake.failNext({.verb = Verb::Patch, .name = "a"}, 1, statusError(500, "boom"));
  auto patched = fake.patch(kSts, "ns", "a", PatchType::Merge, {{"spec", {{"replicas", 2}}}});
  ASSERT_FALSE(patched);
  EXPECT_EQ(patched.error().kind, ErrorKind::ServerError);
  EXPECT_EQ((*fake.find(kSts, "ns", "a"))["spec"]["replicas"], 1);
}

TEST(FakeKubeClient, WritesAreTheSuccessfulCreatesUpdatesAndPatches) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a"));  // the test's own: not a call
  ASSERT_TRUE(fake.create(kSts, "ns", sts("b")));
  EXPECT_FALSE(fake.create(kSts, "ns", sts("b")));  // AlreadyExists: not a write
  EXPECT_TRUE(fake.get(kSts, "ns", "a"));           // not a write
  ASSERT_TRUE(fake.patch(kSts, "ns", "a", PatchType::Merge, {{"spec", {{"replicas", 2}}}}));
  Json stale = *fake.find(kSts, "ns", "b");
  stale["metadata"]["resourceVersion"] = "1";
  EXPECT_FALSE(fake.update(kSts, "ns", stale));  // Conflict: not a write
  const auto all = fake.writes();
  ASSERT_EQ(all.size(), 2U);
  EXPECT_EQ(all[0].verb, Verb::Create);
  EXPECT_EQ(all[1].verb, Verb::Patch);
  EXPECT_EQ(all[1].body["spec"]["replicas"], 2);
  ASSERT_EQ(fake.writes({.name = "b"}).size(), 1U);
  EXPECT_TRUE(fake.writes({.verb = Verb::Update}).empty());
}

TEST(FakeKubeClient, WatchDeliversChangesAfterTheResourceVersionAndStops) {
  FakeKubeClient fake;
  fake.put(kSts, sts("before"));
  const std::string from = fake.currentResourceVersion();
  std::vector<std::pair<WatchEventType, std::string>> seen;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    auto r = fake.watch(
        kSts, "ns", {.resource_version = from},
        [&](WatchEvent&& e) {
          seen.emplace_back(e.type, e.object["metadata"]["name"].get<std::string>());
          return seen.size() < 3;
        },
        &stop);
    EXPECT_TRUE(r);
  });
  Json a = *fake.create(kSts, "ns", sts("a"));
  ASSERT_TRUE(fake.patch(kSts, "ns", "a", PatchType::Merge, {{"spec", {{"replicas", 2}}}}));
  ASSERT_TRUE(fake.remove(kSts, "ns", "a"));
  watcher.join();  // the handler said stop after three events
  ASSERT_EQ(seen.size(), 3U);
  EXPECT_EQ(seen[0], std::make_pair(WatchEventType::Added, std::string("a")));
  EXPECT_EQ(seen[1].first, WatchEventType::Modified);
  EXPECT_EQ(seen[2].first, WatchEventType::Deleted);

  std::thread idle([&] {
    EXPECT_TRUE(fake.watch(
        kSts, "ns", {}, [](WatchEvent&&) { return true; }, &stop));
  });
  stop = true;
  idle.join();  // returns on the stop flag
}

TEST(FakeKubeClient, AWatchFromBeforeACompactionIsGone) {
  FakeKubeClient fake;
  fake.put(kSts, sts("a"));
  const std::string old = fake.currentResourceVersion();
  fake.put(kSts, sts("b"));
  fake.compact();
  std::atomic<bool> stop{true};  // a watch that opens returns at once
  auto gone = fake.watch(
      kSts, "ns", {.resource_version = old}, [](WatchEvent&&) { return true; }, &stop);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().kind, ErrorKind::Gone);
  EXPECT_EQ(gone.error().http_status, 410);
  EXPECT_EQ(gone.error().reason, "Expired");
  EXPECT_TRUE(fake.calls({.verb = Verb::Watch}).back().error);
  EXPECT_TRUE(fake.watch(
      kSts, "ns", {.resource_version = fake.currentResourceVersion()},
      [](WatchEvent&&) { return true; }, &stop));
  EXPECT_TRUE(fake.watch(
      kSts, "ns", {}, [](WatchEvent&&) { return true; }, &stop))
      << "a watch without a resourceVersion starts from now";
}

TEST(FakeKubeClient, ABookmarkReachesOnlyTheWatchesThatAllowBookmarks) {
  FakeKubeClient fake;
  const std::string from = fake.currentResourceVersion();
  auto firstEvent = [&](bool allow_bookmarks, WatchEvent* first) {
    return std::thread([&fake, from, allow_bookmarks, first] {
      EXPECT_TRUE(fake.watch(kSts, "ns",
                             {.resource_version = from, .allow_bookmarks = allow_bookmarks},
                             [first](WatchEvent&& e) {
                               *first = std::move(e);
                               return false;
                             }));
    });
  };
  WatchEvent with{};
  WatchEvent without{};
  std::thread a = firstEvent(true, &with);
  std::thread b = firstEvent(false, &without);
  ASSERT_TRUE(fake.awaitWatchesDelivered(2));
  fake.put(resources::leases(), {{"metadata", {{"name", "elsewhere"}, {"namespace", "ns"}}}});
  const std::string bookmarked = fake.currentResourceVersion();
  fake.bookmark(kSts);
  fake.put(kSts, sts("a"));
  a.join();
  b.join();
  EXPECT_EQ(with.type, WatchEventType::Bookmark);
  EXPECT_EQ(with.object["metadata"]["resourceVersion"], bookmarked);
  EXPECT_EQ(without.type, WatchEventType::Added);
  EXPECT_EQ(without.object["metadata"]["name"], "a");
}

TEST(FakeKubeClient, EndWatchesEndsTheOpenWatchesWithTheErrorOrNormallyAndNewOnesWork) {
  FakeKubeClient fake;
  auto watchFromNow = [&](std::vector<std::string>* names, Result<void>* result) {
    return std::thread([&fake, names, result, from = fake.currentResourceVersion()] {
      *result = fake.watch(kSts, "ns", {.resource_version = from}, [names](WatchEvent&& e) {
        names->push_back(e.object["metadata"]["name"].get<std::string>());
        return true;
      });
    });
  };
  std::vector<std::string> first_names;
  Result<void> first;
  std::thread w1 = watchFromNow(&first_names, &first);
  ASSERT_TRUE(fake.awaitWatchesDelivered(1));
  fake.endWatches(makeError(ErrorKind::Transport, "connection reset").error());
  w1.join();
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().kind, ErrorKind::Transport);
  EXPECT_TRUE(fake.calls({.verb = Verb::Watch})[0].error);

  std::vector<std::string> second_names;
  Result<void> second = std::unexpected(Error{});
  std::thread w2 = watchFromNow(&second_names, &second);
  ASSERT_TRUE(fake.awaitWatchesDelivered(1));
  fake.put(kSts, sts("a"));
  ASSERT_TRUE(fake.awaitWatchesDelivered(1));
  fake.endWatches(std::nullopt);
  w2.join();
  EXPECT_TRUE(second) << "ended normally, as at the server's watch timeout";
  EXPECT_EQ(second_names, std::vector<std::string>{"a"}) << "a watch after an end works";
  EXPECT_TRUE(first_names.empty());
}

// A lagging informer: its resource's changes wait while the other resources' flow; a list reads
// them at once; on release the informer catches up, in order.
TEST(FakeKubeClient, HeldWatchesLagUntilReleasedWhileOtherResourcesFlow) {
  FakeKubeClient fake;
  RealClock clock;
  const Resource secrets = resources::secrets();
  fake.put(kSts, sts("a"));
  Informer stateful_sets(fake, kSts, InformerOptions{.ns = "ns"}, clock);
  Informer others(fake, secrets, InformerOptions{.ns = "ns"}, clock);
  stateful_sets.start();
  others.start();
  ASSERT_TRUE(stateful_sets.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(others.waitForSync(std::chrono::seconds(5)));

  fake.holdWatches(kSts);
  ASSERT_TRUE(
      fake.patch(kSts, "ns", "a", PatchType::Merge, {{"metadata", {{"labels", {{"x", "1"}}}}}}));
  ASSERT_TRUE(fake.create(kSts, "ns", sts("b")));
  Json secret{
      {"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}, {"namespace", "ns"}}}};
  ASSERT_TRUE(fake.create(secrets, "ns", secret));
  ASSERT_TRUE(fake.awaitWatchesDelivered(2)) << "a held watch counts as delivered";
  EXPECT_TRUE(others.store().get("ns/s"));
  EXPECT_FALSE(stateful_sets.store().get("ns/b"));
  EXPECT_FALSE(stateful_sets.store().get("ns/a")->at("metadata").at("labels").contains("x"));
  auto listed = fake.list(kSts, "ns");
  ASSERT_TRUE(listed);
  EXPECT_EQ((*listed)["items"].size(), 2U);

  fake.releaseWatches(kSts);
  ASSERT_TRUE(fake.awaitWatchesDelivered(2));
  EXPECT_TRUE(stateful_sets.store().get("ns/b"));
  EXPECT_TRUE(stateful_sets.store().get("ns/a")->at("metadata").at("labels").contains("x"));
  fake.stopWatches();
  stateful_sets.stop();
  others.stop();
}

TEST(FakeKubeClient, AnInformerFollowsTheFake) {
  FakeKubeClient fake;
  RealClock clock;
  fake.put(kSts, sts("a"));
  Informer informer(fake, kSts, InformerOptions{.ns = "ns"}, clock);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(5)));
  ASSERT_TRUE(fake.create(kSts, "ns", sts("b")));
  ASSERT_TRUE(fake.awaitWatchesDelivered());
  EXPECT_TRUE(informer.store().get("ns/b"));
  fake.stopWatches();
  informer.stop();
}

}  // namespace
}  // namespace shardscaler::k8s::testing
