// ShardSetReader on its own: which requests observe() sends in which case (the guard list alone,
// the name list beside it or after it, the floor of the lists, the guard and the claim holder),
// when observeCached() plans from the caches and when it refuses, and readDrains. Requests are
// counted in the FakeKubeClient's call record; the caches are informers over the same fake.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

#include "caches_fixture.h"
#include "shard_set_reader.h"

namespace shardscaler::controller::testing {
namespace {

using k8s::Json;
using k8s::testing::Call;
using k8s::testing::Verb;
using planner::PlanPurpose;
using planner::TargetKind;
using Selectors = std::vector<std::string>;

const std::string kGuardList = "shardscaler.io/shardset=main";
const std::string kNameList = "operator.prometheus.io/name=main";
// The guard list sent beside the name list: what the name list does not return.
const std::string kGuardListBesideName =
    "shardscaler.io/shardset=main,operator.prometheus.io/name!=main";
const std::string kKey = "monitoring/main";

const k8s::Resource& prometheuses() {
  static const k8s::Resource kResource = planner::targetResource(TargetKind::Prometheus);
  return kResource;
}

// The ShardSet `main` of Prometheus `main` asking for `shards`, with `status` as last written.
api::ShardSet shardSet(int64_t shards, const Json& status = nullptr,
                       const std::string& target = "main") {
  Json object = test_objects::shardSetJson(shards, Json::object(), {.target_name = target});
  object["metadata"]["uid"] = "shardset-uid";
  if (!status.is_null()) object["status"] = status;
  auto decoded = api::decodeShardSet(object);
  EXPECT_TRUE(decoded.has_value());
  return decoded.value_or(api::ShardSet{});
}

// A status whose Ready condition saw generation `observed` (the ShardSet is at generation 4).
Json readyAt(int64_t observed) {
  return Json{
      {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"observedGeneration", observed}}}}};
}

std::set<std::string> names(const Observed& observed) {
  std::set<std::string> out;
  for (const auto& sts : observed.stateful_sets) out.insert(sts.name);
  return out;
}

class ReaderTest : public CachesTest {
 protected:
  // The Prometheus `main` with `shards` shards, claimed by `claimed_by` ("": unclaimed).
  Json putTarget(int64_t shards, const std::string& claimed_by = "main",
                 const Json& spec_patch = Json::object()) {
    return fake_.put(
        prometheuses(),
        test_objects::targetJson(
            shards, spec_patch, {.resource_version = "", .claimed_by = claimed_by, .replicas = 1}));
  }
  // Shard `index` of `main` as the operator made it, with our guard label or without.
  Json putShard(int32_t index, bool guard_label) {
    return fake_.put(k8s::resources::statefulSets(),
                     test_objects::attachedShard(index, {.guard_label = guard_label,
                                                         .resource_version_base = std::nullopt}));
  }
  // The target with `shards` shards, claimed by `main`, every shard labelled: a ShardSet at rest.
  void putAtRest(int32_t shards) {
    putTarget(shards);
    for (int32_t i = 0; i < shards; ++i) putShard(i, true);
  }

  // Starts the caches, waits until they hold everything, and clears the call record.
  void ready() {
    startCaches();
    awaitCaches();
    fake_.clearCalls();
  }

  std::vector<Call> shardLists() const {
    return fake_.calls({.verb = Verb::List, .resource = "statefulsets"});
  }
  // The shard lists' selectors in the order they were sent.
  Selectors selectorsInOrder() const {
    Selectors out;
    for (const Call& c : shardLists()) out.push_back(c.label_selector);
    return out;
  }
  // The same, sorted: lists sent at once run on threads of their own, in any order.
  Selectors selectors() const {
    Selectors out = selectorsInOrder();
    std::ranges::sort(out);
    return out;
  }
  std::size_t count(const k8s::testing::CallMatch& match) const {
    return fake_.calls(match).size();
  }
  // The guard list (beside the name list) was sent after the target's read had been.
  bool guardListAfterTheTarget() const {
    const auto calls = fake_.calls();
    const auto target_read = std::ranges::find_if(
        calls, [](const Call& c) { return c.verb == Verb::Get && c.resource == prometheuses(); });
    const auto guard_list = std::ranges::find_if(calls, [](const Call& c) {
      return c.verb == Verb::List && c.label_selector == kGuardListBesideName;
    });
    return target_read < guard_list && guard_list != calls.end();
  }
  // The requests a plan from the caches would have sent: anything but the informers' watches and
  // the HPA list, which is read once a minute whatever plans.
  std::vector<Call> readsButHpas() const {
    auto calls = fake_.calls();
    std::erase_if(calls, [](const Call& c) {
      return c.verb == Verb::Watch || c.resource.resource == "horizontalpodautoscalers";
    });
    return calls;
  }

  k8s::Result<Observed> observe(const api::ShardSet& shard_set, bool first_round = false,
                                PlanPurpose purpose = PlanPurpose::Converge) {
    return reader_.observe(shard_set, first_round, purpose);
  }

  std::atomic<int> guard_reads_{0};
  std::vector<std::vector<ingestion::DrainShard>> drain_checks_;
  std::vector<ingestion::ShardSource> drain_sources_;
  k8s::TaskPool pool_{3};
  Expectations expectations_;
  ShardSetReader reader_{
      fake_,
      caches_,
      expectations_,
      pool_,
      [this](const std::string&, std::string* why) {
        ++guard_reads_;
        *why = "the test's guard";
        return true;
      },
      [this](const planner::DrainPolicy&, const ingestion::DrainRequest& request) {
        drain_checks_.push_back(request.shards);
        drain_sources_.push_back(request.source);
        std::map<std::string, planner::DrainReading, std::less<>> readings;
        for (const auto& s : request.shards) {
          readings[s.stateful_set].drained = true;
        }
        return readings;
      },
      clock_};
};

// ---- observe(): which lists ------------------------------------------------------------------

TEST_F(ReaderTest, AtRestALiveReadIsTheTargetBesideTheGuardListAlone) {
  putAtRest(2);
  ready();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  ASSERT_TRUE(observed->target);
  EXPECT_EQ(observed->target->uid, test_objects::kTargetUid);
  EXPECT_EQ(names(*observed),
            (std::set<std::string>{"prometheus-main", "prometheus-main-shard-1"}));
  EXPECT_EQ(selectorsInOrder(), Selectors{kGuardList});
  EXPECT_EQ(count({.verb = Verb::Get, .resource = "prometheuses"}), 1U);
  EXPECT_EQ(count({.resource = "shardsets"}), 0U) << "its own claim: no holder to read";
  EXPECT_EQ(guard_reads_, 0) << "no transition may run";
}

// Sent together, the guard list leaves out what the name list returns.
TEST_F(ReaderTest, AnUnlabelledShardInTheCachesSendsTheNameListBesideTheGuardList) {
  putTarget(2);
  putShard(0, true);
  putShard(1, false);
  ready();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

TEST_F(ReaderTest, CachesThatHaveNotSyncedSendTheNameListBesideTheGuardList) {
  putAtRest(2);
  // The StatefulSet informer's first list fails; it backs off on the manual clock, which stays.
  fake_.failNext({.verb = Verb::List, .resource = "statefulsets"}, 1,
                 k8s::testing::statusError(500, "etcd is slow"));
  startCachesUnsynced();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (shardLists().empty() || !shardLists().front().error) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the informer did not list";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(caches_.hasSynced());
  fake_.clearCalls();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

// `shardscaler plan` has no caches.
TEST_F(ReaderTest, WithoutCachesTheNameListIsSentBesideTheGuardList) {
  putAtRest(2);
  ShardSetCaches none(fake_, clock_, nullptr, {.namespaces = {kCachesNs}});
  const ShardSetReader reader(fake_, none, expectations_, pool_, {}, {}, clock_);
  auto observed = reader.observe(shardSet(2), true, PlanPurpose::Converge);
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

// An unclaimed target has no shard of ours but those the name list returns.
TEST_F(ReaderTest, AFirstClaimSendsTheNameListAlone) {
  putTarget(2, "");
  putShard(0, false);
  putShard(1, false);
  ready();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectorsInOrder(), Selectors{kNameList});
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

// The caches show a first claim, but the target read live is claimed after all (or gone): the
// guard list is sent then, after the target's read.
TEST_F(ReaderTest, AFirstClaimWhoseTargetTurnsOutClaimedSendsTheGuardListAfterTheTarget) {
  putTarget(2, "");
  putShard(0, false);
  putShard(1, false);
  ready();
  fake_.holdWatches(prometheuses());
  putTarget(2, "main");
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_TRUE(guardListAfterTheTarget());
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

TEST_F(ReaderTest, AFirstClaimWhoseTargetIsGoneSendsTheGuardListAfterTheTarget) {
  putTarget(2, "");
  putShard(0, false);
  ready();
  fake_.holdWatches(prometheuses());
  fake_.erase(prometheuses(), kCachesNs, "main");
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->target);
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_TRUE(guardListAfterTheTarget());
}

// A shard the operator created after our caches last heard, below the target's spec.shards: the
// guard list lacks it, and the name list is read after it (the shard it shares is taken once).
TEST_F(ReaderTest, AGuardListWithoutAnActiveShardSendsTheNameListAfter) {
  putAtRest(2);
  putTarget(3);
  ready();
  fake_.holdWatches(k8s::resources::statefulSets());
  putShard(2, false);
  auto observed = observe(shardSet(3));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectorsInOrder(), (Selectors{kGuardList, kNameList}));
  EXPECT_EQ(names(*observed), (std::set<std::string>{"prometheus-main", "prometheus-main-shard-1",
                                                     "prometheus-main-shard-2"}));
}

// What the guard list alone may miss is an unlabelled shard at or above the operator's count.
TEST_F(ReaderTest, AnUnlabelledShardAboveTheTargetsCountIsNotListedByName) {
  putAtRest(2);
  ready();
  fake_.holdWatches(k8s::resources::statefulSets());
  putShard(2, false);
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectorsInOrder(), Selectors{kGuardList});
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

// The shards a scale-down has not detached yet, labelled, above the target's new count, do not
// stand in for an active shard the guard list lacks.
TEST_F(ReaderTest, ALabelledShardAboveTheTargetsCountIsNotCountedAsActive) {
  putAtRest(3);
  putTarget(2);
  ready();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectorsInOrder(), Selectors{kGuardList});
  EXPECT_EQ(observed->stateful_sets.size(), 3U);
}

TEST_F(ReaderTest, AMissingTargetSendsTheNameListAfterTheGuardList) {
  putAtRest(2);
  ready();
  fake_.holdWatches(prometheuses());
  fake_.erase(prometheuses(), kCachesNs, "main");
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->target);
  EXPECT_EQ(selectorsInOrder(), (Selectors{kGuardList, kNameList}));
}

TEST_F(ReaderTest, ATopologyTargetSendsTheNameListAfterTheGuardList) {
  putTarget(2, "main",
            {{"shardingStrategy", {{"mode", "Topology"}, {"topology", {{"values", {"a", "b"}}}}}}});
  putShard(0, true);
  putShard(1, true);
  ready();
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  ASSERT_TRUE(observed->target);
  ASSERT_TRUE(observed->target->topologyZones());
  EXPECT_EQ(selectorsInOrder(), (Selectors{kGuardList, kNameList}));
}

// The StatefulSet informer may trail the target's and show a shard the last round detached as
// still attached: a release trusts no cache.
TEST_F(ReaderTest, AReleaseSendsBothListsWhateverTheCaches) {
  putAtRest(2);
  ready();
  auto observed = observe(shardSet(2), false, PlanPurpose::Release);
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(selectors(), (Selectors{kNameList, kGuardListBesideName}));
  EXPECT_EQ(observed->stateful_sets.size(), 2U);
}

// ---- observe(): how the lists read ---------------------------------------------------------

TEST_F(ReaderTest, ListsReadTheWatchCacheNoOlderThanTheNewestShardWrite) {
  putAtRest(2);
  ready();
  auto observed = observe(shardSet(2), false, PlanPurpose::Release);
  ASSERT_TRUE(observed) << observed.error().describe();
  ASSERT_EQ(shardLists().size(), 2U);
  for (const Call& list : shardLists()) {
    EXPECT_EQ(list.list_options.resource_version, "0") << list.label_selector;
    EXPECT_EQ(list.list_options.resource_version_match, "") << list.label_selector;
    EXPECT_TRUE(list.list_options.metadata_only) << list.label_selector;
  }

  // A target write is no floor for the StatefulSet lists.
  expectations_.recordWrite(
      prometheuses(),
      Json{{"metadata", {{"namespace", kCachesNs}, {"name", "main"}, {"resourceVersion", "5000"}}}},
      kKey);
  expectations_.recordWrite(k8s::resources::statefulSets(),
                            Json{{"metadata",
                                  {{"namespace", kCachesNs},
                                   {"name", test_objects::shardName(0)},
                                   {"resourceVersion", "4242"}}}},
                            kKey);
  fake_.clearCalls();
  observed = observe(shardSet(2), false, PlanPurpose::Release);
  ASSERT_TRUE(observed) << observed.error().describe();
  ASSERT_EQ(shardLists().size(), 2U);
  for (const Call& list : shardLists()) {
    EXPECT_EQ(list.list_options.resource_version, "4242") << list.label_selector;
    EXPECT_EQ(list.list_options.resource_version_match, "NotOlderThan") << list.label_selector;
  }
}

// ---- observe(): the guard, the claim holder, the target ------------------------------------

TEST_F(ReaderTest, TheGuardIsReadOnlyWhenATransitionMayRun) {
  putAtRest(2);
  ready();
  ASSERT_TRUE(observe(shardSet(2)));
  EXPECT_EQ(guard_reads_, 0) << "at rest";

  auto observed = observe(shardSet(3));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(guard_reads_, 1) << "another shard count";
  EXPECT_TRUE(observed->guard_enforced);

  Json target = *fake_.find(prometheuses(), kCachesNs, "main");
  target["metadata"]["annotations"][std::string(api::kPausedByAnnotation)] = "other";
  fake_.put(prometheuses(), target);
  observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(guard_reads_, 2) << "paused by another ShardSet";
  EXPECT_TRUE(observed->guard_enforced);
}

TEST_F(ReaderTest, WithoutAGuardTheGuardIsNotEnforced) {
  putAtRest(2);
  ready();
  const ShardSetReader reader(fake_, caches_, expectations_, pool_, {}, {}, clock_);
  auto observed = reader.observe(shardSet(3), true, PlanPurpose::Converge);
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->guard_enforced);
}

// A reconcile's first round on a spec its status has not seen (a scale through the scale
// subresource) reads the guard beside the target, before the target shows a transition.
TEST_F(ReaderTest, AFirstRoundOnASpecItsStatusHasNotSeenReadsTheGuardBesideTheTarget) {
  putAtRest(2);
  ready();
  ASSERT_TRUE(observe(shardSet(2, readyAt(3)), false));
  EXPECT_EQ(guard_reads_, 0) << "not a first round";
  ASSERT_TRUE(observe(shardSet(2, readyAt(4)), true));
  EXPECT_EQ(guard_reads_, 0) << "a spec the status has seen";

  // The target's read waits (bounded) for the guard's: it comes only if the guard is read beside.
  std::atomic<bool> guard_first{false};
  fake_.setBeforeCall([&](const Call& call) {
    if (call.verb != Verb::Get || call.resource != prometheuses()) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (guard_reads_ == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    guard_first = guard_reads_ > 0;
  });
  auto observed = observe(shardSet(2, readyAt(3)), true);
  fake_.setBeforeCall({});
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(guard_reads_, 1);
  EXPECT_TRUE(guard_first);
}

// Another ShardSet's claim is taken over only when that ShardSet no longer exists.
TEST_F(ReaderTest, AnotherShardSetsClaimReadsWhetherItsHolderExists) {
  putTarget(2, "other");
  ready();
  fake_.put(api::shardSets(), test_objects::shardSetJson(2, Json::object(), {.name = "other"}));
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(observed->claim_holder_exists, std::optional<bool>(true));
  EXPECT_EQ(count({.verb = Verb::Get, .resource = "shardsets", .name = "other"}), 1U);

  fake_.erase(api::shardSets(), kCachesNs, "other");
  observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(observed->claim_holder_exists, std::optional<bool>(false));

  fake_.failNext({.verb = Verb::Get, .resource = "shardsets"}, 1,
                 k8s::testing::statusError(500, "etcd is slow"));
  EXPECT_FALSE(observe(shardSet(2))) << "a holder that cannot be read";

  putTarget(2, "main");
  fake_.clearCalls();
  observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->claim_holder_exists);
  EXPECT_EQ(count({.resource = "shardsets"}), 0U);
}

TEST_F(ReaderTest, ATargetThatCannotBeReadFailsTheReadAndAMissingOneDoesNot) {
  putAtRest(2);
  ready();
  fake_.failNext({.verb = Verb::Get, .resource = "prometheuses"}, 1,
                 k8s::testing::statusError(500, "etcd is slow"));
  EXPECT_FALSE(observe(shardSet(2)));

  Json wrong_kind = *fake_.find(prometheuses(), kCachesNs, "main");
  wrong_kind["kind"] = "PrometheusAgent";
  fake_.put(prometheuses(), wrong_kind);
  auto observed = observe(shardSet(2));
  ASSERT_FALSE(observed);
  EXPECT_TRUE(observed.error().is(k8s::ErrorKind::Decode)) << observed.error().describe();

  fake_.erase(prometheuses(), kCachesNs, "main");
  observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->target);
}

// The planner says why; nothing is read.
TEST_F(ReaderTest, AShardSetWithoutAValidTargetRefReadsNothing) {
  putAtRest(2);
  ready();
  api::ShardSet invalid = shardSet(2);
  invalid.spec.target_ref.kind = "Deployment";
  auto observed = observe(invalid);
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->target);
  invalid = shardSet(2, nullptr, "");
  observed = observe(invalid);
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_FALSE(observed->target);
  EXPECT_TRUE(readsButHpas().empty()) << readsButHpas().size();
  EXPECT_EQ(count({.resource = "horizontalpodautoscalers"}), 0U);
}

// ---- who else writes the target ------------------------------------------------------------

Json hpa(const std::string& name, const std::string& kind, const std::string& target) {
  return Json{{"apiVersion", "autoscaling/v1"},
              {"kind", "HorizontalPodAutoscaler"},
              {"metadata", {{"namespace", "monitoring"}, {"name", name}}},
              {"spec", {{"scaleTargetRef", {{"kind", kind}, {"name", target}}}}}};
}

TEST_F(ReaderTest, TheHpasAimedAtTheTargetAreListedOnceAMinute) {
  putAtRest(2);
  fake_.put(k8s::resources::horizontalPodAutoscalers(), hpa("scaler", "Prometheus", "main"));
  fake_.put(k8s::resources::horizontalPodAutoscalers(), hpa("agent", "PrometheusAgent", "main"));
  fake_.put(k8s::resources::horizontalPodAutoscalers(), hpa("web", "Deployment", "main"));
  ready();
  const k8s::testing::CallMatch hpa_lists{.verb = Verb::List,
                                          .resource = "horizontalpodautoscalers"};
  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  EXPECT_EQ(observed->target_hpas, std::vector<std::string>{"scaler"});
  EXPECT_EQ(count(hpa_lists), 1U);

  ASSERT_TRUE(observe(shardSet(2)));
  auto cached = reader_.observeCached(shardSet(2));
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->target_hpas, std::vector<std::string>{"scaler"});
  EXPECT_EQ(count(hpa_lists), 1U) << "within the minute";

  clock_.advance(TargetWriters::kHpaListPeriod);
  ASSERT_TRUE(observe(shardSet(2)));
  EXPECT_EQ(count(hpa_lists), 2U);
}

// The caches drop managedFields: a plan from them reports the writers the last live read found.
TEST_F(ReaderTest, APlanFromTheCachesReportsTheSpecWritersOfTheLastLiveRead) {
  putAtRest(2);
  Json target = *fake_.find(prometheuses(), kCachesNs, "main");
  target["metadata"]["managedFields"] =
      Json::array({{{"manager", "kubectl-edit"},
                    {"operation", "Update"},
                    {"fieldsV1", {{"f:spec", {{"f:shards", Json::object()}}}}}}});
  fake_.put(prometheuses(), target);
  ready();
  auto cached = reader_.observeCached(shardSet(2));
  ASSERT_TRUE(cached);
  EXPECT_TRUE(cached->target_writers.empty()) << "no live read yet";

  auto observed = observe(shardSet(2));
  ASSERT_TRUE(observed) << observed.error().describe();
  ASSERT_EQ(observed->target_writers.size(), 1U);
  EXPECT_EQ(observed->target_writers[0].manager, "kubectl-edit");
  cached = reader_.observeCached(shardSet(2));
  ASSERT_TRUE(cached);
  ASSERT_EQ(cached->target_writers.size(), 1U);
  EXPECT_EQ(cached->target_writers[0].manager, "kubectl-edit");
}

// ---- observeCached() -----------------------------------------------------------------------

TEST_F(ReaderTest, AShardSetAtRestIsObservedFromTheCachesWithoutARead) {
  putAtRest(2);
  ready();
  auto cached = reader_.observeCached(shardSet(2));
  ASSERT_TRUE(cached);
  ASSERT_TRUE(cached->target);
  EXPECT_EQ(cached->target->uid, test_objects::kTargetUid);
  EXPECT_EQ(names(*cached), (std::set<std::string>{"prometheus-main", "prometheus-main-shard-1"}));
  for (const auto& sts : cached->stateful_sets) {
    ASSERT_EQ(sts.owner_references.size(), 1U) << sts.name;
    EXPECT_EQ(sts.owner_references[0].kind, "Prometheus") << sts.name;
    EXPECT_EQ(sts.owner_references[0].uid, test_objects::kTargetUid) << sts.name;
  }
  EXPECT_TRUE(readsButHpas().empty()) << readsButHpas().size();
}

TEST_F(ReaderTest, CachesThatAreNotThereOrNotSyncedAreNotPlannedFrom) {
  putAtRest(2);
  ShardSetCaches none(fake_, clock_, nullptr, {.namespaces = {kCachesNs}});
  const ShardSetReader reader(fake_, none, expectations_, pool_, {}, {}, clock_);
  EXPECT_FALSE(reader.observeCached(shardSet(2))) << "no caches";

  fake_.failNext({.verb = Verb::List, .resource = "statefulsets"}, 1,
                 k8s::testing::statusError(500, "etcd is slow"));
  startCachesUnsynced();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (shardLists().empty() || !shardLists().front().error ||
         !fake_.awaitWatchesDelivered(kWatches - 1, std::chrono::milliseconds(10))) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the informers did not list";
  }
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "the StatefulSet cache has not synced";
}

TEST_F(ReaderTest, AReconcileThatAskedToReadLiveNextIsNotPlannedFromTheCaches) {
  putAtRest(2);
  ready();
  ASSERT_TRUE(reader_.observeCached(shardSet(2)));
  expectations_.expectLiveRead(kKey);
  EXPECT_FALSE(reader_.observeCached(shardSet(2)));
  expectations_.forgetShardSet(kKey);
  EXPECT_TRUE(reader_.observeCached(shardSet(2)));
}

// The caches must be at least as new as what the last live read saw: the target by its
// resourceVersion, the shards by the StatefulSet informer's last resourceVersion.
TEST_F(ReaderTest, CachesOlderThanTheLastLiveReadAreNotPlannedFrom) {
  putTarget(2);
  putShard(0, true);
  const Json newest_shard = putShard(1, true);
  ready();
  const auto version = [](const Json& object) {
    return std::stoull(object["metadata"]["resourceVersion"].get<std::string>());
  };
  const std::uint64_t target_version = version(*fake_.find(prometheuses(), kCachesNs, "main"));

  expectations_.expectCaches(kKey, {.target_version = target_version});
  EXPECT_TRUE(reader_.observeCached(shardSet(2))) << "the very target the live read saw";
  expectations_.expectCaches(kKey, {.target_version = target_version + 1});
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "a newer target";

  expectations_.expectCaches(kKey, {.shards_version = version(newest_shard)});
  EXPECT_TRUE(reader_.observeCached(shardSet(2))) << "the newest shard the live read saw";
  expectations_.expectCaches(kKey,
                             {.shards_version = std::stoull(fake_.currentResourceVersion()) + 1});
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "a shard the cache has not seen";
}

TEST_F(ReaderTest, ATargetWhereATransitionMayRunIsNotPlannedFromTheCaches) {
  putAtRest(2);
  ready();
  EXPECT_FALSE(reader_.observeCached(shardSet(3))) << "another shard count";

  Json target = *fake_.find(prometheuses(), kCachesNs, "main");
  target["metadata"]["annotations"][std::string(api::kPausedByAnnotation)] = "other";
  fake_.put(prometheuses(), target);
  awaitCaches();
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "paused by another ShardSet";

  fake_.put(prometheuses(), test_objects::pausedBy(target, "main"));
  awaitCaches();
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "paused by this ShardSet";
}

TEST_F(ReaderTest, ATargetNotClaimedByTheShardSetIsNotPlannedFromTheCaches) {
  putTarget(2, "");
  putShard(0, true);
  putShard(1, true);
  ready();
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "unclaimed";
  putTarget(2, "other");
  awaitCaches();
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "another's claim";
  EXPECT_FALSE(reader_.observeCached(shardSet(2, nullptr, "absent"))) << "a target not cached";
}

// A shard the operator just created carries no guard label yet: a live read labels it.
TEST_F(ReaderTest, AnAttachedShardWithoutOurLabelIsNotPlannedFromTheCaches) {
  putAtRest(2);
  putShard(1, false);
  ready();
  EXPECT_FALSE(reader_.observeCached(shardSet(2)));
  Json other_label = test_objects::attachedShard(1, {.shard_set = "other"});
  fake_.put(k8s::resources::statefulSets(), other_label);
  awaitCaches();
  EXPECT_FALSE(reader_.observeCached(shardSet(2))) << "another ShardSet's label";
}

// The caches keep no owner references: a detached shard under our guard label is the ShardSet's
// when it is retained with our deadline, and still the target's without it (an older version's
// detach, which a plan adopts). A shard under our label attached to another target is not ours.
TEST_F(ReaderTest, ShardsFromTheCachesAreOwnedAsTheirLabelsSay) {
  putAtRest(2);
  Json retained = test_objects::retainedShard(2, "");
  retained["metadata"]["annotations"][std::string(api::kDeletionDeadlineAnnotation)] =
      "2026-11-22T11:00:00Z";
  fake_.put(k8s::resources::statefulSets(), retained);
  fake_.put(k8s::resources::statefulSets(), test_objects::retainedShard(3, ""));
  fake_.put(k8s::resources::statefulSets(),
            test_objects::attachedShard(0, {.target_name = "elsewhere", .uid_prefix = "else-"}));
  ready();
  auto cached = reader_.observeCached(shardSet(2));
  ASSERT_TRUE(cached);
  std::map<std::string, std::string> owners;
  for (const auto& sts : cached->stateful_sets) {
    ASSERT_EQ(sts.owner_references.size(), 1U) << sts.name;
    owners[sts.name] = sts.owner_references[0].kind + "/" + sts.owner_references[0].uid;
  }
  const std::string target = "Prometheus/" + std::string(test_objects::kTargetUid);
  EXPECT_EQ(owners, (std::map<std::string, std::string>{
                        {"prometheus-main", target},
                        {"prometheus-main-shard-1", target},
                        {"prometheus-main-shard-2", "ShardSet/shardset-uid"},
                        {"prometheus-main-shard-3", target},
                    }));
}

// ---- the guard's status for the metric ------------------------------------------------------

TEST(GuardStatusCache, ReadsEachNamespacesGuardAtMostOnceAMinute) {
  k8s::ManualClock clock;
  std::map<std::string, int> reads;
  GuardStatusCache cache(clock, [&](const std::string& ns, std::string*) {
    ++reads[ns];
    return ns == "monitoring";
  });
  EXPECT_EQ(cache.enforced("monitoring"), std::optional<bool>(true));
  EXPECT_EQ(cache.enforced("monitoring"), std::optional<bool>(true));
  EXPECT_EQ(cache.enforced("other"), std::optional<bool>(false));
  EXPECT_EQ(reads, (std::map<std::string, int>{{"monitoring", 1}, {"other", 1}}));
  clock.advance(std::chrono::seconds(59));
  cache.enforced("monitoring");
  EXPECT_EQ(reads["monitoring"], 1);
  clock.advance(std::chrono::seconds(1));
  cache.enforced("monitoring");
  EXPECT_EQ(reads["monitoring"], 2);
}

TEST(GuardStatusCache, WithoutAGuardThereIsNoStatus) {
  k8s::ManualClock clock;
  GuardStatusCache cache(clock, {});
  EXPECT_EQ(cache.enforced("monitoring"), std::nullopt);
}

// ---- readDrains() ----------------------------------------------------------------------------

TEST_F(ReaderTest, DrainsAreReadWithEachShardsReplicasAndAnUnreadableShardIsNotDrained) {
  Json shard = test_objects::attachedShard(2, {.replicas = 3});
  fake_.put(k8s::resources::statefulSets(), shard);
  planner::Decision decision;
  decision.drain_checks = {
      {.stateful_set = test_objects::shardName(2), .index = 2},
      {.stateful_set = test_objects::shardName(3), .index = 3},
  };
  planner::Target target;
  target.web_tls = true;
  target.web_client_auth_type = "VerifyClientCertIfGiven";
  const auto readings = reader_.readDrains(shardSet(2), target, planner::DrainPolicy{}, decision);
  ASSERT_EQ(drain_checks_.size(), 1U);
  // The pods are found, and read, through the target the request names.
  EXPECT_EQ(drain_sources_.at(0).ns, shardSet(2).ns);
  EXPECT_EQ(drain_sources_.at(0).target_name, shardSet(2).spec.target_ref.name);
  EXPECT_EQ(drain_sources_.at(0).shard_set, shardSet(2).name);
  EXPECT_EQ(drain_sources_.at(0).tls,
            (ingestion::WebTls{.https = true, .client_auth_type = "VerifyClientCertIfGiven"}));
  ASSERT_EQ(drain_checks_[0].size(), 1U);
  EXPECT_EQ(drain_checks_[0][0].stateful_set, test_objects::shardName(2));
  EXPECT_EQ(drain_checks_[0][0].replicas, 3);
  ASSERT_EQ(readings.size(), 2U);
  EXPECT_TRUE(readings.at(test_objects::shardName(2)).drained);
  const auto& missing = readings.at(test_objects::shardName(3));
  EXPECT_FALSE(missing.drained);
  EXPECT_NE(missing.reason.find("cannot read StatefulSet " + test_objects::shardName(3)),
            std::string::npos)
      << missing.reason;

  drain_checks_.clear();
  decision.drain_checks.erase(decision.drain_checks.begin());
  const auto none = reader_.readDrains(shardSet(2), std::nullopt, planner::DrainPolicy{}, decision);
  EXPECT_TRUE(drain_checks_.empty()) << "no shard to ask about";
  EXPECT_FALSE(none.at(test_objects::shardName(3)).drained);
}

}  // namespace
}  // namespace shardscaler::controller::testing
