// Store: keys, reads, and the add/update/delete diff of replace().
#include <gtest/gtest.h>

#include "cache_test_support.h"
#include "shardscaler/k8s_client/store.h"

namespace shardscaler::k8s {
namespace {

using cachetest::makeObject;

ObjectPtr object(const std::string& ns, const std::string& name, const std::string& rv) {
  auto o = makeObject(ns, name);
  o["metadata"]["resourceVersion"] = rv;
  return std::make_shared<const Json>(std::move(o));
}

TEST(StoreKeyTest, NamespacedAndClusterScoped) {
  EXPECT_EQ(objectKey("ns", "a"), "ns/a");
  EXPECT_EQ(objectKey("", "node-1"), "node-1");
  EXPECT_EQ(objectKey(*object("ns", "a", "1")), "ns/a");
  EXPECT_EQ(objectKey(Json{{"metadata", {{"name", "n"}}}}), "n");
  EXPECT_EQ(resourceVersionOf(Json::object()), "");
}

TEST(StoreTest, UpsertEraseAndReads) {
  Store store;
  EXPECT_EQ(store.upsert(object("ns", "a", "1")), nullptr);
  auto first = store.get("ns/a");
  auto previous = store.upsert(object("ns", "a", "2"));
  EXPECT_EQ(previous, first);
  EXPECT_EQ(resourceVersionOf(*first), "1") << "a reader's snapshot never changes";
  EXPECT_EQ(resourceVersionOf(*store.get("ns", "a")), "2");
  store.upsert(object("other", "b", "3"));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.listNamespace("other").size(), 1u);
  EXPECT_EQ(store.list().size(), 2u);
  EXPECT_NE(store.erase("ns/a"), nullptr);
  EXPECT_EQ(store.erase("ns/a"), nullptr);
  EXPECT_EQ(store.keys(), std::vector<std::string>{"other/b"});
}

TEST(StoreTest, ReplaceReportsAddedChangedAndVanished) {
  Store store;
  store.upsert(object("ns", "keep", "1"));
  store.upsert(object("ns", "change", "2"));
  store.upsert(object("ns", "vanish-b", "3"));
  store.upsert(object("ns", "vanish-a", "4"));
  auto kept = store.get("ns/keep");

  auto diff = store.replace(
      {object("ns", "keep", "1"), object("ns", "change", "9"), object("ns", "new", "10")});

  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(objectKey(*diff.added[0]), "ns/new");
  ASSERT_EQ(diff.updated.size(), 1u);
  EXPECT_EQ(resourceVersionOf(*diff.updated[0].first), "2");
  EXPECT_EQ(resourceVersionOf(*diff.updated[0].second), "9");
  ASSERT_EQ(diff.deleted.size(), 2u);
  EXPECT_EQ(objectKey(*diff.deleted[0]), "ns/vanish-a");
  EXPECT_EQ(objectKey(*diff.deleted[1]), "ns/vanish-b");
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.get("ns/keep"), kept) << "unchanged objects keep their pointer";
}

TEST(StoreTest, ReplaceWithoutResourceVersionsComparesContent) {
  Store store;
  store.upsert(std::make_shared<const Json>(makeObject("ns", "a", nullptr, {{"x", 1}})));
  auto same =
      store.replace({std::make_shared<const Json>(makeObject("ns", "a", nullptr, {{"x", 1}}))});
  EXPECT_TRUE(same.updated.empty());
  auto differs =
      store.replace({std::make_shared<const Json>(makeObject("ns", "a", nullptr, {{"x", 2}}))});
  EXPECT_EQ(differs.updated.size(), 1u);
}

}  // namespace
}  // namespace shardscaler::k8s

namespace shardscaler::k8s {
namespace {

ObjectPtr labelled(const std::string& ns, const std::string& name, const std::string& rv,
                   const std::string& team) {
  auto o = cachetest::makeObject(ns, name, team.empty() ? Json(nullptr) : Json{{"team", team}});
  o["metadata"]["resourceVersion"] = rv;
  return std::make_shared<const Json>(std::move(o));
}

// Files each object under "<namespace>/<team label>" (none without the label).
Indexers byTeam() {
  return {{"team", [](const Json& o) {
             std::vector<std::string> values;
             const Json& labels = o["metadata"].value("labels", Json::object());
             if (labels.contains("team")) {
               values.push_back(o["metadata"].value("namespace", "") + "/" +
                                labels["team"].get<std::string>());
             }
             return values;
           }}};
}

std::vector<std::string> keysOf(const std::vector<ObjectPtr>& objects) {
  std::vector<std::string> keys;
  keys.reserve(objects.size());
  for (const auto& o : objects) keys.push_back(objectKey(*o));
  return keys;
}

TEST(StoreIndexTest, UpsertEraseAndReplaceKeepTheIndexCurrent) {
  Store store(byTeam());
  store.upsert(labelled("ns", "b", "1", "red"));
  store.upsert(labelled("ns", "a", "2", "red"));
  store.upsert(labelled("other", "c", "3", "red"));
  store.upsert(labelled("ns", "d", "4", ""));
  EXPECT_EQ(keysOf(store.byIndex("team", "ns/red")), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(keysOf(store.byIndex("team", "other/red")), std::vector<std::string>{"other/c"});
  EXPECT_TRUE(store.byIndex("team", "ns/blue").empty());
  EXPECT_TRUE(store.byIndex("no-such-index", "ns/red").empty());

  // An update that moves an object files it under its new value only.
  store.upsert(labelled("ns", "b", "5", "blue"));
  EXPECT_EQ(keysOf(store.byIndex("team", "ns/red")), std::vector<std::string>{"ns/a"});
  EXPECT_EQ(keysOf(store.byIndex("team", "ns/blue")), std::vector<std::string>{"ns/b"});
  EXPECT_EQ(resourceVersionOf(*store.byIndex("team", "ns/blue")[0]), "5");

  store.erase("ns/a");
  EXPECT_TRUE(store.byIndex("team", "ns/red").empty());

  store.replace({labelled("ns", "b", "5", "blue"), labelled("ns", "e", "6", "red")});
  EXPECT_EQ(keysOf(store.byIndex("team", "ns/red")), std::vector<std::string>{"ns/e"});
  EXPECT_EQ(keysOf(store.byIndex("team", "ns/blue")), std::vector<std::string>{"ns/b"});
  EXPECT_TRUE(store.byIndex("team", "other/red").empty());
}

}  // namespace
}  // namespace shardscaler::k8s
