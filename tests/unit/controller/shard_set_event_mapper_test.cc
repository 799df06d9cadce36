// ShardSetEventMapper on its own: which watch events of ShardSets, targets and StatefulSets queue
// which ShardSets, which it drops (changes nobody reads, echoes of a ShardSet's own writes), and
// its indexers. The handlers are called directly; the ShardSets a target maps to are found in
// informer caches over the FakeKubeClient.
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

#include "caches_fixture.h"

namespace shardscaler::controller::testing {
namespace {

using k8s::Json;
using k8s::ObjectPtr;
using planner::TargetKind;
using Keys = std::set<std::string>;

ObjectPtr ptr(Json object) { return std::make_shared<const Json>(std::move(object)); }

Json withVersion(Json object, const std::string& resource_version) {
  object["metadata"]["resourceVersion"] = resource_version;
  return object;
}

Json shardSetObject(const std::string& name, TargetKind kind, const std::string& target) {
  return withVersion(
      test_objects::shardSetJson(2, Json::object(),
                                 {.name = name, .target_kind = kind, .target_name = target}),
      "10");
}

// Unclaimed.
Json targetObject(TargetKind kind, const std::string& name) {
  return withVersion(
      test_objects::targetJson(2, Json::object(), {.kind = kind, .name = name, .claimed_by = ""}),
      "20");
}

Json labelled(Json object, const Json& labels) {
  object["metadata"]["labels"] = labels;
  return object;
}

// A StatefulSet with exactly these labels.
Json statefulSetObject(const Json& labels) {
  return withVersion(labelled(test_objects::attachedShard(0), labels), "30");
}

const std::string kBound(api::kBoundTargetAnnotation);
const std::string kName(api::kOperatorNameLabel);
const std::string kMode(api::kOperatorModeLabel);
const std::string kGuard(api::kShardSetLabel);
const std::string kShard(api::kOperatorShardLabel);

class EventMapperTest : public CachesTest {
 protected:
  // In the caches: "main" and "agent" name the Prometheus and the PrometheusAgent "main",
  // "other" the Prometheus "other", and "moving" names the Prometheus "next" but is still bound
  // to "main" (it has to release it).
  void SetUp() override {
    for (const Json& shard_set : {shardSetObject("main", TargetKind::Prometheus, "main"),
                                  shardSetObject("agent", TargetKind::PrometheusAgent, "main"),
                                  shardSetObject("other", TargetKind::Prometheus, "other")}) {
      fake_.put(api::shardSets(), shard_set);
    }
    Json moving = shardSetObject("moving", TargetKind::Prometheus, "next");
    moving["metadata"]["annotations"][kBound] = "Prometheus/main";
    fake_.put(api::shardSets(), moving);
    startCaches();
    awaitCaches();
  }

  // The keys queued since the last call.
  Keys taken() {
    Keys keys(queued_.begin(), queued_.end());
    queued_.clear();
    return keys;
  }

  // Records `object` (its version) as written by the reconcile of ShardSet `writer`.
  void recordWrite(const k8s::Resource& resource, const Json& object, const std::string& writer) {
    expectations_.recordWrite(resource, object, writer);
  }

  Expectations expectations_;
  std::vector<std::string> queued_;
  ShardSetEventMapper mapper_{expectations_, caches_,
                              [this](const std::string& key) { queued_.push_back(key); }};
};

// ---- ShardSets -------------------------------------------------------------------------------

TEST_F(EventMapperTest, AShardSetAddedOrDeletedQueuesItself) {
  const auto handlers = mapper_.shardSetHandlers();
  const Json main = shardSetObject("main", TargetKind::Prometheus, "main");
  handlers.on_add(ptr(main));
  EXPECT_EQ(taken(), Keys{"monitoring/main"});
  handlers.on_delete(ptr(main));
  EXPECT_EQ(taken(), Keys{"monitoring/main"});
}

TEST_F(EventMapperTest, AShardSetResyncQueuesIt) {
  const Json main = shardSetObject("main", TargetKind::Prometheus, "main");
  mapper_.shardSetHandlers().on_update(ptr(main), ptr(main));
  EXPECT_EQ(taken(), Keys{"monitoring/main"});
}

TEST_F(EventMapperTest, AShardSetStatusWriteQueuesNothing) {
  const Json old_object = shardSetObject("main", TargetKind::Prometheus, "main");
  Json new_object = withVersion(old_object, "11");
  new_object["status"] = {{"shards", 2}};
  mapper_.shardSetHandlers().on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{});
}

TEST_F(EventMapperTest, AShardSetChangeOfGenerationLabelsAnnotationsOrDeletionQueuesIt) {
  const Json old_object = shardSetObject("main", TargetKind::Prometheus, "main");
  const std::vector<std::pair<std::string, std::function<void(Json&)>>> changes = {
      {"generation", [](Json& o) { o["metadata"]["generation"] = 5; }},
      {"labels", [](Json& o) { o["metadata"]["labels"]["team"] = "a"; }},
      {"annotations", [](Json& o) { o["metadata"]["annotations"]["note"] = "a"; }},
      {"deletionTimestamp",
       [](Json& o) { o["metadata"]["deletionTimestamp"] = "2026-11-22T10:00:00Z"; }},
  };
  for (const auto& [what, change] : changes) {
    Json new_object = withVersion(old_object, "11");
    change(new_object);
    mapper_.shardSetHandlers().on_update(ptr(old_object), ptr(new_object));
    EXPECT_EQ(taken(), Keys{"monitoring/main"}) << what;
  }
}

// The bound-target annotation is the one field worthReconciling compares that a reconcile writes
// on its own ShardSet; its echo does not queue that ShardSet.
TEST_F(EventMapperTest, TheEchoOfItsOwnBoundTargetAnnotationDoesNotQueueTheShardSet) {
  const Json old_object = shardSetObject("main", TargetKind::Prometheus, "main");
  Json new_object = withVersion(old_object, "11");
  new_object["metadata"]["annotations"][kBound] = "Prometheus/main";
  recordWrite(api::shardSets(), new_object, "monitoring/main");
  mapper_.shardSetHandlers().on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{});
  EXPECT_EQ(expectations_.pendingEchoes(), 0U) << "the echo consumes its record";
}

// The annotation is a merge patch with no read after it: a version that also carries another
// change (a relist shows only the newest) queues as any event does.
TEST_F(EventMapperTest, AnEchoOfTheBoundTargetWithAnotherChangeQueuesTheShardSet) {
  const Json old_object = shardSetObject("main", TargetKind::Prometheus, "main");
  const std::vector<std::pair<std::string, std::function<void(Json&)>>> others = {
      {"generation", [](Json& o) { o["metadata"]["generation"] = 5; }},
      {"labels", [](Json& o) { o["metadata"]["labels"]["team"] = "a"; }},
      {"another annotation", [](Json& o) { o["metadata"]["annotations"]["note"] = "a"; }},
      {"deletionTimestamp",
       [](Json& o) { o["metadata"]["deletionTimestamp"] = "2026-11-22T10:00:00Z"; }},
  };
  int version = 11;
  for (const auto& [what, change] : others) {
    Json new_object = withVersion(old_object, std::to_string(version++));
    new_object["metadata"]["annotations"][kBound] = "Prometheus/main";
    change(new_object);
    recordWrite(api::shardSets(), new_object, "monitoring/main");
    mapper_.shardSetHandlers().on_update(ptr(old_object), ptr(new_object));
    EXPECT_EQ(taken(), Keys{"monitoring/main"}) << what;
  }
}

TEST_F(EventMapperTest, ABoundTargetAnnotationAnyoneElseWroteQueuesTheShardSet) {
  const Json old_object = shardSetObject("main", TargetKind::Prometheus, "main");
  Json new_object = withVersion(old_object, "11");
  new_object["metadata"]["annotations"][kBound] = "Prometheus/main";
  mapper_.shardSetHandlers().on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/main"}) << "a write not recorded";

  new_object = withVersion(new_object, "12");
  new_object["metadata"]["annotations"][kBound] = "Prometheus/other";
  recordWrite(api::shardSets(), new_object, "monitoring/other");
  mapper_.shardSetHandlers().on_update(ptr(withVersion(old_object, "11")), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/main"}) << "another ShardSet's write";
}

TEST_F(EventMapperTest, ADeletedShardSetsWriteRecordsAreForgotten) {
  const Json main = shardSetObject("main", TargetKind::Prometheus, "main");
  recordWrite(api::shardSets(), withVersion(main, "11"), "monitoring/main");
  ASSERT_EQ(expectations_.pendingEchoes(), 1U);
  mapper_.shardSetHandlers().on_delete(ptr(withVersion(main, "11")));
  EXPECT_EQ(expectations_.pendingEchoes(), 0U);
}

// ---- targets ---------------------------------------------------------------------------------

TEST_F(EventMapperTest, ATargetQueuesTheShardSetsThatNameItOrAreBoundToIt) {
  mapper_.targetHandlers(TargetKind::Prometheus)
      .on_add(ptr(targetObject(TargetKind::Prometheus, "main")));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving"}));

  mapper_.targetHandlers(TargetKind::PrometheusAgent)
      .on_add(ptr(targetObject(TargetKind::PrometheusAgent, "main")));
  EXPECT_EQ(taken(), Keys{"monitoring/agent"}) << "the same name of the other kind";

  mapper_.targetHandlers(TargetKind::Prometheus)
      .on_delete(ptr(targetObject(TargetKind::Prometheus, "other")));
  EXPECT_EQ(taken(), Keys{"monitoring/other"});

  mapper_.targetHandlers(TargetKind::Prometheus)
      .on_add(ptr(targetObject(TargetKind::Prometheus, "unnamed")));
  EXPECT_EQ(taken(), Keys{}) << "a target no ShardSet names";
}

TEST_F(EventMapperTest, ATargetResyncQueuesItsShardSets) {
  const Json target = targetObject(TargetKind::Prometheus, "other");
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(target), ptr(target));
  EXPECT_EQ(taken(), Keys{"monitoring/other"});
}

// A transition may wait for the operator's pause report, which is a status write.
TEST_F(EventMapperTest, ATargetStatusChangeQueuesItsShardSets) {
  const Json old_object = targetObject(TargetKind::Prometheus, "other");
  Json new_object = withVersion(old_object, "21");
  new_object["status"] = {{"paused", true}};
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/other"});
}

TEST_F(EventMapperTest, ATargetChangeOfGenerationOrAnnotationsQueuesItsShardSets) {
  const Json old_object = targetObject(TargetKind::Prometheus, "other");
  Json new_object = withVersion(old_object, "21");
  new_object["metadata"]["generation"] = 8;
  new_object["spec"]["shards"] = 3;
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/other"}) << "generation";

  new_object = withVersion(old_object, "21");
  new_object["metadata"]["annotations"][std::string(api::kPausedByAnnotation)] = "other";
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/other"}) << "annotations";
}

// A new version that changes neither the metadata the mapper compares nor the status (here its
// managedFields) is not worth a reconcile.
TEST_F(EventMapperTest, ATargetChangeOfNothingTheMapperComparesQueuesNothing) {
  const Json old_object = targetObject(TargetKind::Prometheus, "other");
  Json new_object = withVersion(old_object, "21");
  new_object["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{});
}

// The echo of a claim skips the ShardSet that wrote it, not the others naming the target.
TEST_F(EventMapperTest, TheEchoOfATargetWriteQueuesEveryShardSetButItsWriter) {
  const Json old_object = targetObject(TargetKind::Prometheus, "main");
  Json new_object = withVersion(old_object, "21");
  new_object["metadata"]["annotations"][std::string(api::kClaimedByAnnotation)] = "main";
  recordWrite(planner::targetResource(TargetKind::Prometheus), new_object, "monitoring/main");
  mapper_.targetHandlers(TargetKind::Prometheus).on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/moving"});
  EXPECT_EQ(expectations_.pendingEchoes(), 0U);
}

TEST_F(EventMapperTest, ADeletedTargetsWriteRecordsAreForgotten) {
  const Json target = targetObject(TargetKind::PrometheusAgent, "main");
  recordWrite(planner::targetResource(TargetKind::PrometheusAgent), withVersion(target, "21"),
              "monitoring/agent");
  ASSERT_EQ(expectations_.pendingEchoes(), 1U);
  mapper_.targetHandlers(TargetKind::PrometheusAgent).on_delete(ptr(withVersion(target, "21")));
  EXPECT_EQ(expectations_.pendingEchoes(), 0U);
  EXPECT_EQ(taken(), Keys{"monitoring/agent"}) << "a delete is never an echo";
}

// ---- StatefulSets ----------------------------------------------------------------------------

TEST_F(EventMapperTest, AShardQueuesTheShardSetOfItsGuardLabel) {
  mapper_.statefulSetHandlers().on_add(ptr(statefulSetObject({{kShard, "0"}, {kGuard, "other"}})));
  EXPECT_EQ(taken(), Keys{"monitoring/other"});
}

// The operator's name label attaches a shard to a target of the kind its mode label says; a
// shard without a mode it knows is mapped to both kinds.
TEST_F(EventMapperTest, AnAttachedShardQueuesTheShardSetsOfItsTargetOfItsMode) {
  const auto handlers = mapper_.statefulSetHandlers();
  handlers.on_add(ptr(statefulSetObject({{kShard, "0"}, {kName, "main"}, {kMode, "server"}})));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving"})) << "server";
  handlers.on_add(ptr(statefulSetObject({{kShard, "0"}, {kName, "main"}, {kMode, "agent"}})));
  EXPECT_EQ(taken(), Keys{"monitoring/agent"}) << "agent";
  handlers.on_add(ptr(statefulSetObject({{kShard, "0"}, {kName, "main"}})));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving", "monitoring/agent"}))
      << "no mode";
  handlers.on_add(ptr(statefulSetObject({{kShard, "0"}, {kName, "main"}, {kMode, "daemon"}})));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving", "monitoring/agent"}))
      << "an unknown mode";
}

TEST_F(EventMapperTest, AShardWithNeitherLabelQueuesNothing) {
  const auto handlers = mapper_.statefulSetHandlers();
  handlers.on_add(ptr(statefulSetObject({{kShard, "0"}})));
  Json unlabelled = statefulSetObject(Json::object());
  unlabelled["metadata"].erase("labels");
  handlers.on_add(ptr(unlabelled));
  handlers.on_delete(ptr(unlabelled));
  EXPECT_EQ(taken(), Keys{});
}

// A detach moves a shard from the target's name label to the ShardSet's guard label alone: the
// ShardSets of the old labels and of the new ones are queued.
TEST_F(EventMapperTest, ADetachOrReattachQueuesTheOwnersOfTheOldAndTheNewLabels) {
  const Json attached = statefulSetObject({{kShard, "1"}, {kName, "main"}, {kMode, "server"}});
  Json detached = withVersion(attached, "31");
  detached["metadata"]["labels"] = {{kShard, "1"}, {kGuard, "other"}};
  mapper_.statefulSetHandlers().on_update(ptr(attached), ptr(detached));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving", "monitoring/other"}))
      << "detach";
  mapper_.statefulSetHandlers().on_update(ptr(detached), ptr(withVersion(attached, "32")));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving", "monitoring/other"}))
      << "re-attach";
}

TEST_F(EventMapperTest, AShardStatusWriteQueuesNothing) {
  const Json old_object =
      statefulSetObject({{kShard, "1"}, {kName, "main"}, {kMode, "server"}, {kGuard, "main"}});
  Json new_object = withVersion(old_object, "31");
  new_object["status"] = {{"readyReplicas", 2}};
  mapper_.statefulSetHandlers().on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{});

  mapper_.statefulSetHandlers().on_update(ptr(old_object), ptr(old_object));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving"})) << "a resync";
}

// Our guard label coming back: the ShardSet that wrote it is not queued, every other ShardSet
// the shard maps to is.
TEST_F(EventMapperTest, TheEchoOfAShardWriteQueuesEveryShardSetButItsWriter) {
  const Json old_object = statefulSetObject({{kShard, "1"}, {kName, "main"}, {kMode, "server"}});
  Json new_object = withVersion(old_object, "31");
  new_object["metadata"]["labels"][kGuard] = "main";
  recordWrite(k8s::resources::statefulSets(), new_object, "monitoring/main");
  mapper_.statefulSetHandlers().on_update(ptr(old_object), ptr(new_object));
  EXPECT_EQ(taken(), Keys{"monitoring/moving"});
  EXPECT_EQ(expectations_.pendingEchoes(), 0U);

  // The same change by anyone else queues both.
  mapper_.statefulSetHandlers().on_update(ptr(old_object), ptr(withVersion(new_object, "32")));
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving"}));
}

TEST_F(EventMapperTest, ADeletedShardQueuesItsShardSetsAndItsWriteRecordsAreForgotten) {
  const Json shard =
      statefulSetObject({{kShard, "1"}, {kName, "main"}, {kMode, "server"}, {kGuard, "main"}});
  recordWrite(k8s::resources::statefulSets(), withVersion(shard, "31"), "monitoring/main");
  ASSERT_EQ(expectations_.pendingEchoes(), 1U);
  mapper_.statefulSetHandlers().on_delete(ptr(withVersion(shard, "31")));
  EXPECT_EQ(expectations_.pendingEchoes(), 0U);
  EXPECT_EQ(taken(), (Keys{"monitoring/main", "monitoring/moving"})) << "a delete is never an echo";
}

// ---- indexers --------------------------------------------------------------------------------

using Values = std::vector<std::string>;

TEST(EventMapperIndexers, AShardSetIsFiledUnderItsTargetRefAndItsBoundTarget) {
  Json shard_set = shardSetObject("main", TargetKind::Prometheus, "next");
  EXPECT_EQ(ShardSetEventMapper::shardSetTargets(shard_set), Values{"monitoring/Prometheus/next"});

  shard_set["metadata"]["annotations"][kBound] = "Prometheus/main";
  EXPECT_EQ(ShardSetEventMapper::shardSetTargets(shard_set),
            (Values{"monitoring/Prometheus/next", "monitoring/Prometheus/main"}));

  shard_set["metadata"]["annotations"][kBound] = "Prometheus/next";
  EXPECT_EQ(ShardSetEventMapper::shardSetTargets(shard_set), Values{"monitoring/Prometheus/next"})
      << "filed once when both name the same target";

  shard_set["spec"]["targetRef"]["name"] = 7;
  shard_set["metadata"]["annotations"][kBound] = "PrometheusAgent/main";
  EXPECT_EQ(ShardSetEventMapper::shardSetTargets(shard_set),
            Values{"monitoring/PrometheusAgent/main"})
      << "an invalid targetRef still leaves the bound target";

  shard_set["spec"].erase("targetRef");
  shard_set["metadata"].erase("annotations");
  EXPECT_EQ(ShardSetEventMapper::shardSetTargets(shard_set), Values{});
}

TEST(EventMapperIndexers, AShardIsAttachedByTheNameLabelAndDetachedByTheGuardLabelAlone) {
  const Json attached = statefulSetObject({{kShard, "0"}, {kName, "main"}, {kGuard, "set"}});
  EXPECT_EQ(ShardSetEventMapper::attachedTo(attached), Values{"monitoring/main"});
  EXPECT_EQ(ShardSetEventMapper::detachedFor(attached), Values{})
      << "a guard label on an attached shard does not make it detached";

  const Json detached = statefulSetObject({{kShard, "0"}, {kGuard, "set"}});
  EXPECT_EQ(ShardSetEventMapper::attachedTo(detached), Values{});
  EXPECT_EQ(ShardSetEventMapper::detachedFor(detached), Values{"monitoring/set"});

  const Json neither = statefulSetObject({{kShard, "0"}});
  EXPECT_EQ(ShardSetEventMapper::attachedTo(neither), Values{});
  EXPECT_EQ(ShardSetEventMapper::detachedFor(neither), Values{});
}

}  // namespace
}  // namespace shardscaler::controller::testing
