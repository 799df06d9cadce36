// Property checks over random observed states: no plan ever deletes an active, unexpired or
// foreign StatefulSet, or resumes a target someone else paused; and a simulated cluster (operator
// emulator, plans cut short at random, time moving) always converges with nothing lost. The
// states are drawn by rapidcheck: a failure shrinks to the smallest state that still fails.
#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "fixtures.h"
#include "shardscaler/planner/desired_shards.h"
#include "shardscaler/planner/duration.h"
#include "shardscaler/planner/planner.h"
#include "shardscaler/resharding/low_churn_rules.h"
#include "shardscaler/resharding/scrape_classes.h"
#include "shardscaler/test_kit/property.h"

namespace shardscaler::planner {
namespace testing {

// How rapidcheck shows a drawn world (found by argument-dependent lookup).
void showValue(const World& w, std::ostream& os) {
  os << "ShardSet " << w.shard_set.dump() << "\ntarget " << (w.target ? w.target->dump() : "none")
     << "\n";
  for (const auto& s : w.stateful_sets) os << "StatefulSet " << s.dump() << "\n";
  os << "guarded " << (w.guarded ? "yes" : "no") << ", purpose "
     << (w.purpose == PlanPurpose::Release ? "release" : "converge") << ", hold "
     << (w.hold ? "yes" : "no") << ", claim holder exists "
     << (w.claim_holder_exists ? (*w.claim_holder_exists ? "yes" : "no") : "unknown") << "\n";
}

}  // namespace testing

namespace {

using namespace testing;

// Draws inside a property. Each shrinks towards its low end, the first option or false, so a
// failing state shrinks towards the plain one.
int uniform(int lo, int hi) {
  // Full range at every size: rapidcheck narrows inRange for its early, small cases.
  return *rc::gen::resize(100, rc::gen::inRange(lo, hi + 1));
}
bool chance(double p) { return uniform(0, 999) >= 1000 - std::lround(p * 1000); }
template <typename T>
const T& pick(const std::vector<T>& options) {
  return options[static_cast<size_t>(uniform(0, static_cast<int>(options.size()) - 1))];
}

// The failures the gtest assertions in `checks` report, as text; they fail no test themselves.
template <typename Checks>
std::string failuresOf(Checks checks) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    checks();
  }
  std::string out;
  for (int i = 0; i < results.size(); ++i) {
    const auto& r = results.GetTestPartResult(i);
    out += std::string(r.file_name() ? r.file_name() : "?") + ":" +
           std::to_string(r.line_number()) + ": " + r.message() + "\n";
  }
  return out;
}

// A fixed seed: every run checks the same states (test_kit::checkProperty).
template <typename Property>
void checkProperty(int cases, Property property) {
  test_kit::checkProperty(cases, 20261122, std::move(property));
}

int64_t effectiveShards(const Json& target) {
  const Json& s = target["spec"];
  if (!s.contains("shards") || s["shards"].is_null()) return 1;
  return std::max<int64_t>(1, s["shards"].get<int64_t>());
}

std::string annotation(const Json& obj, const std::string& key) {
  const Json& md = obj["metadata"];
  if (!md.contains("annotations") || !md["annotations"].contains(key)) return "";
  return md["annotations"][key].get<std::string>();
}

std::string label(const Json& obj, const std::string& key) {
  const Json& md = obj["metadata"];
  if (!md.contains("labels") || !md["labels"].contains(key)) return "";
  return md["labels"][key].get<std::string>();
}

bool targetPausedBy(const Json& target, const std::string& who) {
  return target["spec"].value("paused", false) &&
         annotation(target, "shardscaler.io/paused-by") == who;
}

bool acknowledged(const Json& target) {
  const Json status = target.value("status", Json::object());
  if (!status.value("paused", false)) return false;
  const int64_t generation = target["metadata"].value("generation", 0);
  bool any = false;
  for (const auto& c : status.value("conditions", Json::array())) {
    if (c.value("observedGeneration", -1) < generation) return false;
    any = true;
  }
  return any;
}

std::optional<std::chrono::system_clock::time_point> timeAnnotation(const Json& obj,
                                                                    const std::string& key) {
  const std::string text = annotation(obj, key);
  return parseAnnotationTime(text.empty() ? nullptr : &text);
}

// The checks restate the rules from the raw objects, without the planner's own helpers.
void expectSafe(const World& w, const PlanInput& in, const Plan& plan) {
  const PlanMode mode = plan.decision.mode;
  if (mode == PlanMode::TargetNotFound || mode == PlanMode::TargetDeleting ||
      mode == PlanMode::TargetClaimed) {
    EXPECT_TRUE(plan.actions.empty());
    return;
  }
  if (plan.actions.empty()) return;
  ASSERT_TRUE(w.target.has_value());
  const Json& target = *w.target;
  const int64_t cur = effectiveShards(target);
  const bool target_paused = target["spec"].value("paused", false);
  const bool ours = targetPausedBy(target, "main");
  const bool guarded = in.safety.guard_enforced;
  const auto settle = in.safety.settle_time;
  const std::string claim = annotation(target, "shardscaler.io/claimed-by");
  const bool converging = mode == PlanMode::Converge;
  if (converging && claim != "main") {
    // A target this ShardSet has not claimed gets the claim first, and nothing after it but the
    // guard label on its attached shards.
    EXPECT_EQ(plan.actions[0].type, ActionType::ClaimTarget);
    for (std::size_t i = 1; i < plan.actions.size(); ++i) {
      const Action& a = plan.actions[i];
      EXPECT_EQ(a.type, ActionType::LabelStatefulSet) << a.summary;
      EXPECT_EQ(a.merge_patch["metadata"]["labels"]["shardscaler.io/shardset"], "main")
          << a.summary;
    }
  }
  std::optional<int32_t> want;
  if (auto d = desiredShards(in.shard_set.spec.shards, in.shard_set.spec.min_shards,
                             in.shard_set.spec.max_shards, in.target->topologyZones())) {
    want = d->want;
  }
  // Without the guard: the latest detach of a shard at or above `want`, as the annotations say.
  std::optional<std::chrono::system_clock::time_point> last_detach;
  for (const auto& s : w.stateful_sets) {
    if (label(s, "shardscaler.io/retained") != "true" ||
        label(s, "shardscaler.io/shardset") != "main" ||
        s["metadata"].contains("deletionTimestamp"))
      continue;
    const std::string shard = label(s, "operator.prometheus.io/shard");
    if (shard.empty() || !label(s, "operator.prometheus.io/name").empty()) continue;
    if (s["metadata"]["name"] != shardName(std::stoi(shard)) ||
        s["metadata"]["ownerReferences"].empty() ||
        s["metadata"]["ownerReferences"][0]["uid"] != kTargetUid ||
        label(s, "operator.prometheus.io/mode") != "server")
      continue;  // not provably ours: the operator cannot see it either
    // Shards below this are about to be (or stay) expected by the operator: re-attached. An
    // undo (an abandoned transition) re-attaches what is below the target's count.
    const int64_t kept_from =
        converging && plan.decision.abandoned_because.empty() && want ? *want : cur;
    if (std::stoi(shard) < kept_from) continue;
    last_detach = std::max(last_detach, timeAnnotation(s, "shardscaler.io/detached-at"));
  }
  for (const Action& a : plan.actions) {
    SCOPED_TRACE(a.summary);  // the whole plan is printed once, by the caller
    if (a.isTargetAction()) {
      EXPECT_EQ(a.uid, kTargetUid);
      EXPECT_EQ(a.merge_patch["metadata"]["uid"], kTargetUid);
      if (a.type == ActionType::ClaimTarget) {
        EXPECT_TRUE(converging);
        EXPECT_NE(claim, "main");
        EXPECT_TRUE(claim.empty() || in.claim_holder_exists == false);
        EXPECT_EQ(a.resource_version, target["metadata"]["resourceVersion"].get<std::string>());
      } else if (a.type == ActionType::PauseTarget) {
        EXPECT_TRUE(converging);
        EXPECT_FALSE(in.hold_transitions);
        // Paused again only to stamp a pause of ours that has no readable paused-at.
        // (With the guard only while a shard below the target's count is yet to appear: then
        // the settle time after the pause gates lowering spec.shards, guard or not.)
        EXPECT_TRUE(!target_paused ||
                    (ours && !timeAnnotation(target, "shardscaler.io/paused-at")));
      } else if (a.merge_patch.contains("spec")) {
        const Json& spec = a.merge_patch["spec"];
        if (spec.contains("paused")) {
          EXPECT_EQ(spec["paused"], false);
          // Never resume what someone else paused; resume what we paused (now or before).
          EXPECT_TRUE(ours || (!target_paused && std::ranges::any_of(plan.actions, [](auto& p) {
                        return p.type == ActionType::PauseTarget;
                      })));
          // Without the guard, not while the operator may still see a just-detached shard.
          if (!guarded && last_detach) {
            EXPECT_GE(w.now, *last_detach + settle);
          }
        }
        if (spec.contains("shards")) {
          EXPECT_TRUE(converging);
          EXPECT_FALSE(in.hold_transitions);
          EXPECT_EQ(spec["shards"], want.value_or(-1));
          // Acts on what was read: the observed resourceVersion is a precondition, of the update
          // itself or, with the guard, of the pause this plan starts with.
          const bool paused_in_plan = std::ranges::any_of(
              plan.actions, [](const Action& p) { return p.type == ActionType::PauseTarget; });
          if (guarded && paused_in_plan) {
            EXPECT_TRUE(a.resource_version.empty());
            EXPECT_EQ(only(plan, ActionType::PauseTarget).resource_version,
                      target["metadata"]["resourceVersion"].get<std::string>());
          } else {
            EXPECT_EQ(a.resource_version, target["metadata"]["resourceVersion"].get<std::string>());
          }
          if (!guarded && last_detach) {
            EXPECT_GE(w.now, *last_detach + settle);
          }
          if (!guarded && ours && spec["shards"].get<int64_t>() < cur &&
              plan.decision.policy->when_scaled == WhenScaled::Retain) {
            EXPECT_TRUE(acknowledged(target)) << "lowered before the pause was acknowledged";
          }
        }
      }
      continue;
    }
    // Every StatefulSet write names an object that exists, is provably the target's shard i.
    const Json* sts = nullptr;
    for (const auto& s : w.stateful_sets) {
      if (s["metadata"]["name"] == a.object_name) sts = &s;
    }
    ASSERT_NE(sts, nullptr);
    EXPECT_EQ((*sts)["metadata"]["uid"], a.uid);
    const std::string shard = label(*sts, "operator.prometheus.io/shard");
    ASSERT_TRUE(a.shard_index.has_value());
    EXPECT_EQ(shard, std::to_string(*a.shard_index));
    EXPECT_EQ(a.object_name, shardName(*a.shard_index));
    bool owned = false;
    for (const auto& o : (*sts)["metadata"].value("ownerReferences", Json::array())) {
      owned = owned || (o["uid"] == kTargetUid && o["kind"] == "Prometheus");
    }
    EXPECT_TRUE(owned);
    EXPECT_FALSE((*sts)["metadata"].contains("deletionTimestamp"));
    const std::string name_label = label(*sts, "operator.prometheus.io/name");
    const int index = *a.shard_index;
    switch (a.type) {
      case ActionType::DeleteStatefulSet: {
        EXPECT_TRUE(converging);
        EXPECT_GE(index, cur) << "deleted a shard the target still counts";
        ASSERT_TRUE(want.has_value());
        EXPECT_GE(index, *want) << "deleted a shard that is wanted";
        EXPECT_EQ((*sts)["metadata"]["resourceVersion"], a.resource_version);
        if (!name_label.empty()) {
          EXPECT_EQ(name_label, "main");
          EXPECT_EQ(plan.decision.policy->when_scaled, WhenScaled::Delete);
        } else {
          EXPECT_EQ(label(*sts, "shardscaler.io/retained"), "true");
          EXPECT_EQ(label(*sts, "shardscaler.io/shardset"), "main");
          auto deadline =
              parseDeletionTimestamp(annotation(*sts, "operator.prometheus.io/deletion-timestamp"));
          ASSERT_TRUE(deadline.has_value()) << "deleted with a garbage deadline";
          EXPECT_FALSE(deadline->isNever());
          EXPECT_TRUE(deadline->expiredAt(w.now)) << "deleted before its deadline";
        }
        break;
      }
      case ActionType::DetachStatefulSet: {
        EXPECT_EQ(name_label, "main");
        // Every detach starts a fresh life: no drain marks of an earlier one, and a deadline of
        // its own, unless the operator's own retention set one (a value that is not a copy of
        // shardscaler's) or an unreadable one (never, as the operator reads it).
        const Json& annotations = a.merge_patch["metadata"]["annotations"];
        for (const char* mark : {"shardscaler.io/drained-at", "shardscaler.io/draining-since"}) {
          EXPECT_TRUE(annotations.contains(mark) && annotations[mark].is_null())
              << mark << " kept: " << annotations.dump();
        }
        ASSERT_TRUE(a.deadline.has_value());
        const std::string operators = annotation(*sts, "operator.prometheus.io/deletion-deadline");
        const auto operator_deadline = parseDeletionTimestamp(operators);
        const bool copy_of_ours =
            !operators.empty() &&
            (operators == annotation(*sts, "shardscaler.io/deletion-deadline") ||
             operators == annotation(*sts, "operator.prometheus.io/deletion-timestamp"));
        if (!operators.empty() && !operator_deadline) {
          EXPECT_TRUE(a.deadline->isNever()) << "an unreadable operator deadline became finite";
        } else if (!operators.empty() && !copy_of_ours) {
          EXPECT_EQ(*a.deadline, *operator_deadline) << "the operator's own deadline replaced";
        } else if (plan.decision.new_deadline) {
          EXPECT_EQ(*a.deadline, *plan.decision.new_deadline) << "an old life's deadline reused";
        }
        if (converging && plan.decision.abandoned_because.empty()) {
          ASSERT_TRUE(want.has_value());
          EXPECT_GE(index, *want);
          EXPECT_TRUE(target_paused || plan.actions.front().type == ActionType::PauseTarget ||
                      plan.actions.back().type == ActionType::PauseTarget ||
                      std::ranges::any_of(plan.actions, [](const Action& x) {
                        return x.type == ActionType::PauseTarget;
                      }));
          if (!guarded && !(target_paused && !ours)) {
            EXPECT_TRUE(ours && acknowledged(target)) << "detached before the pause was seen";
          }
        } else {
          // Undoing: only a shard the operator would delete, while we hold the target paused.
          EXPECT_TRUE(ours);
          EXPECT_GE(index, cur);
        }
        break;
      }
      case ActionType::ReattachStatefulSet:
        if (converging && plan.decision.abandoned_because.empty()) {
          EXPECT_LT(index, want.value_or(-1));
          if (!guarded && ours && index >= cur) {
            EXPECT_TRUE(acknowledged(target));
            const auto paused_at = timeAnnotation(target, "shardscaler.io/paused-at");
            ASSERT_TRUE(paused_at.has_value());
            EXPECT_GE(w.now, *paused_at + settle) << "re-attached within the settle time";
          }
        } else {
          EXPECT_LT(index, cur);
        }
        break;
      case ActionType::LabelStatefulSet: {
        EXPECT_EQ(name_label, "main");  // only active shards carry the guard label on its own
        const Json value = a.merge_patch["metadata"]["labels"]["shardscaler.io/shardset"];
        if (mode == PlanMode::Release) {
          EXPECT_TRUE(value.is_null());
        } else {
          EXPECT_TRUE(converging);
          EXPECT_EQ(value, "main");
        }
        break;
      }
      case ActionType::MarkDrainState:
        // Only a due shard's drain is marked: retained, past its deadline.
        EXPECT_TRUE(converging);
        EXPECT_TRUE(name_label.empty());
        EXPECT_EQ(label(*sts, "shardscaler.io/retained"), "true");
        EXPECT_TRUE(plan.decision.drain && plan.decision.drain->enabled);
        break;
      default:
        ADD_FAILURE() << "unexpected action";
    }
  }
}

Json randomStatefulSet(int index) {
  const std::vector<std::string> deadlines = {"2026-11-20T00:00:00Z",
                                              "2026-11-25T00:00:00Z",
                                              "2026-11-22T10:00:00Z",
                                              "2026-11-22T09:59:59Z",
                                              "0001-01-01T00:00:00Z",
                                              "garbage",
                                              ""};
  Json s;
  switch (uniform(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      s = attachedShard(index);
      break;
    case 4:
    case 5:
    case 6:
      s = retainedShard(index, pick(deadlines));
      break;
    case 7: {
      // Detached once, then labelled back by someone else: the marks of that life stay, the
      // operator's deadline annotation a copy of shardscaler's.
      const std::string deadline = pick(deadlines);
      s = retainedShard(index, deadline);
      s["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
      Json& annotations = s["metadata"]["annotations"];
      if (!deadline.empty() && chance(0.7)) {
        annotations["shardscaler.io/deletion-deadline"] = deadline;
        annotations["operator.prometheus.io/deletion-deadline"] = deadline;
      }
      if (chance(0.5)) annotations["shardscaler.io/drained-at"] = "2026-11-21T00:00:05Z";
      if (chance(0.5)) annotations["shardscaler.io/draining-since"] = "2026-11-21T00:00:01Z";
      break;
    }
    default: {  // foreign in one way or another
      s = chance(0.5) ? attachedShard(index) : retainedShard(index, "2026-11-20T00:00:00Z");
      auto& md = s["metadata"];
      switch (uniform(0, 6)) {
        case 0:
          md["ownerReferences"][0]["uid"] = "other-uid";
          break;
        case 1:
          md["ownerReferences"] = Json::array();
          break;
        case 2:
          md["name"] = "prometheus-other-shard-" + std::to_string(index);
          break;
        case 3:
          md["labels"]["operator.prometheus.io/shard"] = std::to_string(index + 1);
          break;
        case 4:
          md["labels"]["shardscaler.io/shardset"] = "other";
          md["labels"].erase("operator.prometheus.io/name");
          break;
        case 5:
          md["labels"]["operator.prometheus.io/mode"] = "agent";
          break;
        default:
          md["labels"].erase("operator.prometheus.io/shard");
          break;
      }
    }
  }
  if (chance(0.1)) {
    // The operator's own retention (v0.92+), or something it reads as never.
    s["metadata"]["annotations"]["operator.prometheus.io/deletion-deadline"] =
        pick(std::vector<std::string>{"2026-11-25T00:00:00Z", "2026-11-20T00:00:00Z",
                                      "0001-01-01T00:00:00Z", "garbage"});
  }
  if (chance(0.1)) s["metadata"]["deletionTimestamp"] = "2026-11-22T09:00:00Z";
  if (chance(0.5)) {
    s["metadata"]["annotations"]["shardscaler.io/detached-at"] = pick(std::vector<std::string>{
        "2026-11-22T09:59:58Z", "2026-11-22T09:59:40Z", "2026-11-21T00:00:00Z"});
  }
  if (chance(0.1)) s["metadata"]["labels"].erase("shardscaler.io/shardset");
  return s;
}

World randomWorld() {
  Json spec = Json::object();
  const std::vector<int> mins = {-1, 0, 1, 2, 3};
  if (chance(0.3)) spec["minShards"] = pick(mins);
  if (chance(0.3)) spec["maxShards"] = uniform(1, 9);
  const std::vector<std::string> whens = {"", "Retain", "Retain", "Delete", "Keep"};
  const std::vector<std::string> periods = {"", "1h", "3d", "0", "bad"};
  const std::string when = pick(whens), period = pick(periods);
  if (!when.empty()) spec["shardRetentionPolicy"]["whenScaled"] = when;
  if (!period.empty()) spec["shardRetentionPolicy"]["retain"]["retentionPeriod"] = period;
  World w;
  w.shard_set = shardSetJson(uniform(-1, 9), spec);
  if (chance(0.05)) w.shard_set["spec"].erase("shards");

  if (chance(0.92)) {
    Json tspec = Json::object();
    if (chance(0.3)) tspec["retention"] = pick(std::vector<std::string>{"15d", "bad", ""});
    if (chance(0.2)) tspec["retentionSize"] = "10GB";
    if (chance(0.3))
      tspec["shardRetentionPolicy"]["whenScaled"] = pick(whens).empty() ? "Retain" : pick(whens);
    if (chance(0.15)) {
      tspec["shardingStrategy"] = {
          {"mode", "Topology"},
          {"topology", {{"values", chance(0.5) ? Json{"a", "b"} : Json{"a", "b", "c"}}}}};
    }
    Json t = targetJson(uniform(0, 9), tspec);
    if (chance(0.1)) t["spec"].erase("shards");
    if (chance(0.4)) t = pausedBy(t, pick(std::vector<std::string>{"", "main", "other"}));
    if (chance(0.1)) t["metadata"]["annotations"]["shardscaler.io/paused-by"] = "main";  // stale
    if (chance(0.04)) t["metadata"]["deletionTimestamp"] = "2026-11-22T09:00:00Z";
    if (chance(0.15)) {
      t["metadata"]["annotations"].erase("shardscaler.io/claimed-by");
    } else if (chance(0.1)) {
      t["metadata"]["annotations"]["shardscaler.io/claimed-by"] = "other";
      w.claim_holder_exists = chance(0.5);
    }
    if (t["spec"].value("paused", false) && chance(0.3)) {
      t["status"]["paused"] = false;  // the operator has not seen the pause yet
    }
    if (chance(0.5)) {
      t["metadata"]["annotations"]["shardscaler.io/paused-at"] = pick(std::vector<std::string>{
          "2026-11-22T09:59:55Z", "2026-11-22T09:59:45Z", "2026-11-22T09:59:00Z", "garbage"});
    }
    w.target = t;
  }
  w.guarded = chance(0.5);
  if (chance(0.1)) w.purpose = PlanPurpose::Release;
  w.hold = chance(0.05);
  for (int i = 0; i < 10; ++i) {
    if (chance(0.7)) w.stateful_sets.push_back(randomStatefulSet(i));
  }
  return w;
}

TEST(PlannerProperty, RandomObservationsNeverLeadToUnsafeWrites) {
  size_t deletes = 0, detaches = 0, reattaches = 0, unpauses = 0;
  checkProperty(5000, [&] {
    const World w = *rc::gen::exec(randomWorld);
    const PlanInput in = w.input();
    const Plan plan = planShardSet(in);
    const std::string failures = failuresOf([&] { expectSafe(w, in, plan); });
    if (!failures.empty()) RC_FAIL(failures + describe(plan));
    for (const auto& a : plan.actions) {
      deletes += a.type == ActionType::DeleteStatefulSet;
      detaches += a.type == ActionType::DetachStatefulSet;
      reattaches += a.type == ActionType::ReattachStatefulSet;
      unpauses += a.type == ActionType::UpdateTarget && a.merge_patch.contains("spec") &&
                  a.merge_patch["spec"].contains("paused");
    }
  });
  if (::testing::Test::HasFailure()) return;
  // The generator reaches every kind of write (else the checks above check nothing).
  EXPECT_GT(deletes, 200u);
  EXPECT_GT(detaches, 200u);
  EXPECT_GT(reattaches, 200u);
  EXPECT_GT(unpauses, 200u);
}

// Retain for a day; Delete; Delete with a drain (removed shards detached, deleted once drained).
enum class ClusterPolicy { Retain, Delete, Drain };

std::string_view toString(ClusterPolicy policy) {
  switch (policy) {
    case ClusterPolicy::Retain:
      return "Retain";
    case ClusterPolicy::Delete:
      return "Delete";
    case ClusterPolicy::Drain:
      return "Delete with a drain";
  }
  return "?";
}

// The low-churn table in force on a target: its shard count, or nullopt without shardscaler's
// rules.
std::optional<int32_t> lowChurnTableShards(const Json& target) {
  const Json classes = target["spec"].value("scrapeClasses", Json());
  if (!resharding::carriesOwnRules(classes)) return std::nullopt;
  auto rules = resharding::parseRules(resharding::ownRules(classes));
  return rules ? rules->table.shards : -1;
}

// A namespace with the target, its StatefulSets and an operator that behaves as docs/design.md,
// and another writer that raises the target's spec.shards now and then (the operator then puts its
// labels back on retained shards it expects, with the marks of their earlier life). With low
// churn, the target selects one ScrapeConfig of static targets.
class Cluster {
 public:
  Cluster(ClusterPolicy policy, bool low_churn)
      : policy_(policy), retain_(policy == ClusterPolicy::Retain), low_churn_(low_churn) {
    Json spec{
        {"minShards", 1},
        {"maxShards", 8},
        {"shardRetentionPolicy",
         {{"whenScaled", retain_ ? "Retain" : "Delete"}, {"retain", {{"retentionPeriod", "1d"}}}}}};
    if (policy == ClusterPolicy::Drain) {
      spec["shardRetentionPolicy"]["drain"] = {{"enabled", true}};
    }
    if (low_churn) {
      spec["resharding"] = "LowChurn";
      Json sc{{"metadata", {{"namespace", "ns"}, {"name", "static"}}},
              {"spec", {{"staticConfigs", Json::array({{{"targets", Json::array()}}})}}}};
      for (int i = 0; i < 60; ++i) {
        sc["spec"]["staticConfigs"][0]["targets"].push_back("10.0.0." + std::to_string(i) + ":9");
      }
      w_.scrape_objects = {resharding::readScrapeObject(resharding::ScrapeKind::ScrapeConfig, sc)};
    }
    w_.shard_set = shardSetJson(3, spec);
    w_.target = targetJson(3);
    w_.stateful_sets = attachedShards(0, 3);
  }

  void run(int steps) {
    // Time passing first: a step shrinks to "0 hours pass", which does nothing.
    for (int i = 0; i < steps && unsafe_.empty(); ++i) {
      const int roll = uniform(0, 99);
      if (roll < 15) {
        const int hours = uniform(0, 30);
        w_.now += std::chrono::hours(hours);
        if (hours > 0) log_ += "+" + std::to_string(hours) + "h\n";
      } else if (roll < 35) {
        w_.shard_set["spec"]["shards"] = uniform(1, 8);
        w_.shard_set["metadata"]["generation"] =
            w_.shard_set["metadata"]["generation"].get<int>() + 1;
        log_ += "shards=" + w_.shard_set["spec"]["shards"].dump() + "\n";
      } else if (roll < 40) {
        raiseByAnotherWriter();
      } else if (roll < 77) {
        reconcile(/*may_crash=*/true);
      } else {
        if (operatorStep()) log_ += "operator\n";
      }
    }
  }

  // No more spec changes or crashes: reconcile and let the operator act until both rest.
  void settle() {
    for (int round = 0; round < 30; ++round) {
      const bool planned = reconcile(/*may_crash=*/false, /*all_drained=*/true);
      const bool operated = operatorStep();
      if (planned || operated) continue;
      // Both rest; a plan that waits (the settle time after a pause) is requeued that much later.
      const auto waiting = planShardSet(w_.input()).requeue_after;
      if (!waiting) return;
      w_.now += std::chrono::duration_cast<std::chrono::system_clock::duration>(*waiting);
    }
    FAIL() << "did not converge";
  }

  void expectConverged() {
    const Plan plan = planShardSet(w_.input());
    const int32_t want = plan.decision.desired->want;
    const Json& t = *w_.target;
    EXPECT_EQ(effectiveShards(t), want);
    EXPECT_FALSE(t["spec"].value("paused", false));
    EXPECT_EQ(annotation(t, "shardscaler.io/paused-by"), "");
    std::set<int> attached;
    for (const auto& s : w_.stateful_sets) {
      const int index = std::stoi(label(s, "operator.prometheus.io/shard"));
      if (!label(s, "operator.prometheus.io/name").empty()) {
        EXPECT_LT(index, want) << s.dump();
        EXPECT_EQ(label(s, "shardscaler.io/retained"), "") << s.dump();
        attached.insert(index);
      } else {
        EXPECT_TRUE(retain_);
        EXPECT_GE(index, want) << s.dump();
        auto d = parseDeletionTimestamp(annotation(s, "operator.prometheus.io/deletion-timestamp"));
        ASSERT_TRUE(d.has_value());
        EXPECT_FALSE(d->expiredAt(w_.now)) << s.dump();
      }
    }
    EXPECT_EQ(attached.size(), static_cast<size_t>(want));
    EXPECT_EQ(plan.status.shards, want);
    EXPECT_EQ(condition(plan, kConditionReady).status, "True")
        << condition(plan, kConditionReady).message;
    if (retain_) {
      EXPECT_EQ(operator_deletes_, 0) << "the operator deleted a shard's data";
    }
    if (low_churn_) {
      EXPECT_EQ(lowChurnTableShards(t), want) << t["spec"].dump();
    }
  }

  int plannerDeletes() const { return planner_deletes_; }
  int drainedDeletes() const { return drained_deletes_; }
  // An unsafe plan's failures, once one was planned (the run stops there); else empty.
  const std::string& unsafe() const { return unsafe_; }
  // What happened, one step a line.
  const std::string& log() const { return log_; }

 private:
  Json* find(const std::string& name) {
    for (auto& s : w_.stateful_sets) {
      if (s["metadata"]["name"] == name) return &s;
    }
    return nullptr;
  }

  std::string nextRv() { return std::to_string(++rv_); }

  // Applies one action as the API server would; false on 404/409.
  bool apply(const Action& a) {
    if (a.isTargetAction()) {
      Json& t = *w_.target;
      if (t["metadata"]["uid"] != a.uid) return false;
      if (!a.resource_version.empty() && t["metadata"]["resourceVersion"] != a.resource_version)
        return false;
      const Json spec_before = t["spec"];
      if (const auto spec = a.merge_patch.find("spec"); spec != a.merge_patch.end()) {
        foreign_shards_ =
            foreign_shards_ && !spec->contains("shards") && !spec->contains("scrapeClasses");
      }
      t.merge_patch(a.merge_patch);
      t["metadata"]["resourceVersion"] = nextRv();
      if (t["spec"] != spec_before) {
        t["metadata"]["generation"] = t["metadata"]["generation"].get<int64_t>() + 1;
      }
      return true;
    }
    Json* s = find(a.object_name);
    if (s == nullptr || (*s)["metadata"]["uid"] != a.uid) return false;
    if (a.type == ActionType::DeleteStatefulSet) {
      if ((*s)["metadata"]["resourceVersion"] != a.resource_version) return false;
      checkDeletion(*s);
      std::erase_if(w_.stateful_sets,
                    [&](const Json& x) { return x["metadata"]["name"] == a.object_name; });
      lives_.erase(a.object_name);
      ++planner_deletes_;
      return true;
    }
    if (a.type == ActionType::DetachStatefulSet) lives_[a.object_name] = {.detached = w_.now};
    if (a.type == ActionType::ReattachStatefulSet) lives_.erase(a.object_name);
    s->merge_patch(a.merge_patch);
    (*s)["metadata"]["resourceVersion"] = nextRv();
    return true;
  }

  // A retained shard the planner deletes has lived out this life: retained for the whole period
  // since its latest detach (Retain), or read drained since then (a drain).
  void checkDeletion(const Json& sts) {
    if (!label(sts, "operator.prometheus.io/name").empty()) return;  // Delete: an attached one
    const std::string name = sts["metadata"]["name"];
    const auto life = lives_.find(name);
    if (life == lives_.end()) {
      unsafe_ += "deleted " + name + ", which was never detached\n";
    } else if (retain_ && w_.now <= life->second.detached + std::chrono::hours(24)) {
      unsafe_ += "deleted " + name + " within a day of its latest detach\n";
    } else if (policy_ == ClusterPolicy::Drain && !life->second.read_drained) {
      unsafe_ += "deleted " + name + " with no drained reading since its latest detach\n";
    }
    drained_deletes_ += policy_ == ClusterPolicy::Drain;
  }

  // Another writer of spec.shards (kubectl scale prometheus, a GitOps tool): only ever up, so the
  // operator deletes nothing; it re-labels retained shards it now expects.
  void raiseByAnotherWriter() {
    Json& t = *w_.target;
    const int64_t raised = std::min<int64_t>(8, effectiveShards(t) + uniform(1, 3));
    if (raised <= effectiveShards(t)) return;
    t["spec"]["shards"] = raised;
    foreign_shards_ = true;
    t["metadata"]["generation"] = t["metadata"]["generation"].get<int64_t>() + 1;
    t["metadata"]["resourceVersion"] = nextRv();
    log_ += "target shards=" + std::to_string(raised) + " (another writer)\n";
  }

  // One plan, applied in order; with may_crash, cut short at a random point, and the operator
  // may act between two writes. Returns whether the plan had actions.
  bool reconcile(bool may_crash, bool all_drained = false) {
    PlanInput in = w_.input();
    Plan plan = planShardSet(in);
    if (!plan.decision.drain_checks.empty()) {
      // As the controller does: read each due shard's drain, plan again with the readings.
      for (const auto& check : plan.decision.drain_checks) {
        const bool drained = all_drained || chance(0.5);
        DrainReading& reading = w_.drain_readings[check.stateful_set];
        reading = drained ? DrainReading{.drained = true, .lag_seconds = 1}
                          : DrainReading{.drained = false, .lag_seconds = 90, .reason = "lags"};
        // The surviving shards' config reloader has reloaded them by now, or is not read.
        if (all_drained || chance(0.7)) reading.survivors_reloaded_at = w_.now;
        if (drained && lives_.contains(check.stateful_set)) {
          lives_[check.stateful_set].read_drained = true;
        }
        log_ += "drain of " + check.stateful_set + (drained ? " read drained\n" : " lags\n");
      }
      in = w_.input();
      plan = planShardSet(in);
      w_.drain_readings.clear();
    }
    const std::string failures = failuresOf([&] { expectSafe(w_, in, plan); });
    if (!failures.empty()) {
      unsafe_ = failures + "unsafe plan in the cluster:\n" + describe(plan);
      return false;
    }
    size_t stop = plan.actions.size();
    if (may_crash && chance(0.5)) {
      stop = static_cast<size_t>(uniform(0, static_cast<int>(stop)));
    }
    std::string applied;
    for (size_t i = 0; i < stop; ++i) {
      if (!apply(plan.actions[i])) break;
      applied += (applied.empty() ? "" : ", ") + step(plan.actions[i]);
      if (may_crash && chance(0.2) && operatorStep()) applied += ", operator";
    }
    if (!plan.actions.empty()) {
      log_ += "reconcile: " + applied + (stop < plan.actions.size() ? " (cut short)" : "") + "\n";
    }
    return !plan.actions.empty();
  }

  // The operator, unless paused: deletes what it selects beyond spec.shards, creates what is
  // missing, and puts its labels back on an existing StatefulSet it expected (AlreadyExists).
  bool operatorStep() {
    Json& t = *w_.target;
    // Reports in its status whether it saw the pause, for the generation it saw
    // (docs/design/lagging-operator.md).
    const bool paused = t["spec"].value("paused", false);
    const Json& generation = t["metadata"]["generation"];
    const Json status{{"paused", paused},
                      {"conditions",
                       {{{"type", "Available"}, {"observedGeneration", generation}},
                        {{"type", "Reconciled"}, {"observedGeneration", generation}}}}};
    if (t.value("status", Json()) != status) {
      t["status"] = status;
      t["metadata"]["resourceVersion"] = nextRv();
      return true;
    }
    if (paused) return false;
    const int64_t n = effectiveShards(t);
    // The configuration the operator generates now carries the table: it must be the one for the
    // shard count it generates with, in every transition. Only another writer's spec.shards may
    // part them, until shardscaler writes the count or the table again.
    if (auto table = lowChurnTableShards(t);
        table && *table != n && !foreign_shards_ && unsafe_.empty()) {
      unsafe_ = "the operator generates a configuration with a low-churn table for " +
                std::to_string(*table) + " shards and spec.shards " + std::to_string(n) + "\n";
    }
    bool changed = false;
    const size_t before = w_.stateful_sets.size();
    std::erase_if(w_.stateful_sets, [&](const Json& s) {
      return label(s, "operator.prometheus.io/name") == "main" &&
             std::stoi(label(s, "operator.prometheus.io/shard")) >= n;
    });
    operator_deletes_ += static_cast<int>(before - w_.stateful_sets.size());
    changed = before != w_.stateful_sets.size();
    for (int i = 0; i < n; ++i) {
      if (Json* s = find(shardName(i))) {
        if (label(*s, "operator.prometheus.io/name").empty()) {
          (*s)["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
          (*s)["metadata"]["resourceVersion"] = nextRv();
          changed = true;
        }
        continue;
      }
      Json s = attachedShard(i);
      s["metadata"]["uid"] = "sim-uid-" + std::to_string(++uid_);
      s["metadata"]["resourceVersion"] = nextRv();
      w_.stateful_sets.push_back(std::move(s));
      changed = true;
    }
    return changed;
  }

  // One life of a retained shard: since its latest detach.
  struct Life {
    system_clock::time_point detached;
    bool read_drained = false;
  };

  ClusterPolicy policy_;
  bool retain_;
  bool low_churn_;
  World w_;
  std::map<std::string, Life> lives_;  // by StatefulSet name
  int drained_deletes_ = 0;
  // Another writer set spec.shards, and no write of shardscaler's set it or the table since.
  bool foreign_shards_ = false;
  int rv_ = 2000;
  int uid_ = 0;
  int operator_deletes_ = 0;
  int planner_deletes_ = 0;
  std::string unsafe_;
  std::string log_;
};

// One simulation: the policy, what went wrong, what happened.
struct ClusterRun {
  ClusterPolicy policy = ClusterPolicy::Retain;
  bool low_churn = false;
  std::string failures;
  std::string log;
  int planner_deletes = 0;
  int drained_deletes = 0;
};

void showValue(const ClusterRun& run, std::ostream& os) {
  os << "whenScaled " << toString(run.policy) << (run.low_churn ? ", resharding LowChurn" : "")
     << ", steps:\n"
     << run.log;
}

ClusterRun runCluster() {
  ClusterRun run;
  run.policy = pick(std::vector{ClusterPolicy::Retain, ClusterPolicy::Retain, ClusterPolicy::Retain,
                                ClusterPolicy::Delete, ClusterPolicy::Drain, ClusterPolicy::Drain});
  run.low_churn = chance(0.5);
  Cluster cluster(run.policy, run.low_churn);
  run.failures = failuresOf([&] {
    cluster.run(80);
    if (!cluster.unsafe().empty()) return;
    cluster.settle();
    cluster.expectConverged();
  });
  run.failures += cluster.unsafe();
  run.log = cluster.log();
  run.planner_deletes = cluster.plannerDeletes();
  run.drained_deletes = cluster.drainedDeletes();
  return run;
}

TEST(PlannerProperty, InterruptedScalingAlwaysConvergesWithNothingLost) {
  int expired_deletes = 0, drained_deletes = 0;
  checkProperty(300, [&] {
    const ClusterRun run = *rc::gen::exec(runCluster);
    if (!run.failures.empty()) RC_FAIL(run.failures);
    if (run.policy == ClusterPolicy::Retain) expired_deletes += run.planner_deletes;
    drained_deletes += run.drained_deletes;
  });
  if (::testing::Test::HasFailure()) return;
  EXPECT_GT(expired_deletes, 50) << "retained shards never expired in the simulation";
  EXPECT_GT(drained_deletes, 50) << "no drained shard was deleted in the simulation";
}

}  // namespace
}  // namespace shardscaler::planner
