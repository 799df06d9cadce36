// The controller's read-plan-apply rounds: what a reconcile reads from the API server (a plan
// that writes must see the previous plan's writes, which our caches may not have yet), how write
// failures are met, and when a ShardSet at rest is planned from the caches instead.
#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/controller/api_resources.h"
#include "shardscaler/controller/shardset_controller.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/shard_inventory.h"

#include "object_fields.h"

namespace shardscaler::controller {

using k8s::Json;

struct ShardSetController::Observed {
  std::optional<planner::Target> target;
  std::vector<planner::ObservedStatefulSet> stateful_sets;
  std::optional<bool> claim_holder_exists;
  bool guard_enforced = false;
};

namespace {

// The StatefulSets one list returns, skipping what is not a StatefulSet at all. The list is
// served by the API server's watch cache, once it holds `floor` (NotOlderThan; 0: as it is): a
// quorum list with a label selector reads every StatefulSet of the namespace from etcd and filters
// them, which made each reconcile cost the server O(namespace) (about 0.1 s per 500 StatefulSets).
k8s::Result<std::vector<planner::ObservedStatefulSet>> listShards(k8s::KubeClient& client,
                                                                  const std::string& ns,
                                                                  const std::string& selector,
                                                                  std::uint64_t floor) {
  // A plan reads only the shards' metadata: the API server sends PartialObjectMetadata (5.2 of
  // a StatefulSet's 9.2 KB in issue 10's workload, without spec and status), and managedFields,
  // 4.3 KB of those, are skipped by the SAX decoder, never built.
  static const auto kFields = std::make_shared<const k8s::FieldMask>(
      k8s::FieldMask::keepNone().keep({"metadata"}).drop({"metadata", "managedFields"}));
  k8s::ListOptions opts{.label_selector = selector,
                        .resource_version = "0",
                        .metadata_only = true,
                        .fields = kFields};
  if (floor > 0) {
    opts.resource_version = std::to_string(floor);
    opts.resource_version_match = "NotOlderThan";
  }
  auto list = k8s::listAll(client, k8s::resources::statefulSets(), ns, opts);
  if (!list) return std::unexpected(list.error());
  std::vector<planner::ObservedStatefulSet> out;
  for (const Json& item : (*list)["items"]) {
    auto sts = planner::parseStatefulSet(item);
    if (!sts) {
      telemetry::logEvent(telemetry::LogLevel::Warn, "ignoring malformed StatefulSet",
                          {{"namespace", ns}, {"error", sts.error().describe()}});
      continue;
    }
    out.push_back(std::move(*sts));
  }
  return out;
}

// The ShardSet's spec changed since its status was last written (a scale through the scale
// subresource, as kubectl scale and the HPA do, bumps the generation): most likely a transition
// no reconcile has acted on yet.
bool specUnobserved(const api::ShardSet& shard_set) {
  const api::Condition* ready =
      k8s::findStatusCondition(shard_set.conditions, api::kConditionReady);
  return ready != nullptr && ready->observed_generation < shard_set.generation;
}

// Every shard the operator runs for the target (each index below its spec.shards) is among the
// observed StatefulSets, attached. Topology targets and a missing target count as not.
bool everyActiveShardListed(const api::ShardSet& shard_set,
                            const std::optional<planner::Target>& target,
                            std::span<const planner::ObservedStatefulSet> stateful_sets) {
  if (!target || target->topologyZones()) return false;
  const int32_t active = target->effectiveShards();
  std::set<int32_t> listed;
  for (const planner::ShardStatefulSet& shard :
       planner::takeInventory(shard_set, *target, stateful_sets).attached) {
    if (shard.index < active) listed.insert(shard.index);
  }
  return std::cmp_equal(listed.size(), active);
}

bool pausedBy(const planner::Target& t, const std::string& shard_set) {
  const std::string* by = t.annotation(planner::kPausedByAnnotation);
  return t.paused && by != nullptr && *by == shard_set;
}

// A transition may run (so the guard is to be read): the target is paused by this ShardSet or
// another, or its shard count is not the one the ShardSet asks for.
bool mayTransition(const api::ShardSet& shard_set, const planner::Target& t) {
  return pausedBy(t, shard_set.name) || shard_set.spec.shards.value_or(1) != t.effectiveShards() ||
         t.annotation(planner::kPausedByAnnotation) != nullptr;
}

// A plan from the caches is kept only when it says the ShardSet is at rest on a target it holds:
// nothing to write but the status, nothing to wait for, nothing to report.
bool atRest(const planner::Plan& plan, const api::ShardSet& shard_set) {
  const planner::Decision& d = plan.decision;
  return plan.actions.empty() && plan.events.empty() && d.mode == planner::PlanMode::Converge &&
         d.waiting_for.empty() && d.abandoned_because.empty() && !d.target_paused_by_us &&
         !d.target_paused_by_others && d.claimed_by == shard_set.name;
}

}  // namespace

std::optional<ShardSetController::Observed> ShardSetController::observeCached(
    const api::ShardSet& shard_set) const {
  auto caches = syncedCaches(shard_set);
  if (!caches) return std::nullopt;
  const planner::TargetKind kind = caches->kind;
  const k8s::Informer* targets = caches->targets;
  const k8s::Informer* shards = caches->shards;

  LiveRead last;
  {
    std::lock_guard lock(live_reads_mutex_);
    if (auto it = live_reads_.find(k8s::objectKey(shard_set.ns, shard_set.name));
        it != live_reads_.end()) {
      last = it->second;
    }
  }
  if (last.read_live_next) return std::nullopt;
  // The shard cache has applied every StatefulSet event up to its resourceVersion, so at least
  // the newest shard the last live read saw (and every deletion before it).
  if (revisionOf(shards->lastSyncResourceVersion()) < last.shards_version) return std::nullopt;
  const k8s::ObjectPtr cached_target =
      targets->store().get(shard_set.ns, shard_set.spec.target_ref.name);
  if (!cached_target) return std::nullopt;
  auto target = planner::parseTarget(*cached_target, kind);
  if (!target || revisionOf(target->resource_version) < last.target_version) return std::nullopt;
  if (mayTransition(shard_set, *target)) return std::nullopt;
  if (const std::string* holder = target->annotation(planner::kClaimedByAnnotation);
      holder == nullptr || *holder != shard_set.name) {
    return std::nullopt;  // unclaimed, or another's claim: its holder is read live
  }

  // The shards attached to the target (whatever their labels) and the detached ones under our
  // guard label: what the live lists return that the planner does not ignore. Each must carry
  // our label. The label is written only on shards a live plan found owned by the target
  // (planner::takeInventory checks the owner reference first), so the cache, which keeps no
  // owner references, takes a labelled shard as the target's. One without it (a shard the
  // operator just created) is read live, and labelled there.
  Observed observed;
  const std::string attached_value = shard_set.ns + "/" + shard_set.spec.target_ref.name;
  const std::string detached_value = k8s::objectKey(shard_set.ns, shard_set.name);
  for (const auto& [index, value] :
       {std::pair{kAttachedIndex, attached_value}, std::pair{kDetachedIndex, detached_value}}) {
    for (const k8s::ObjectPtr& object : shards->store().byIndex(index, value)) {
      planner::ObservedStatefulSet sts;
      sts.name = stringAt(*object, "metadata", "name");
      sts.resource_version = stringAt(*object, "metadata", "resourceVersion");
      sts.being_deleted = !field(*object, "metadata", "deletionTimestamp").is_null();
      for (const auto& [into, from] :
           {std::pair{&sts.labels, "labels"}, std::pair{&sts.annotations, "annotations"}}) {
        const Json& map = field(*object, "metadata", from);
        if (!map.is_object()) continue;
        for (const auto& [k, v] : map.items()) {
          if (v.is_string()) into->emplace(k, v.get<std::string>());
        }
      }
      const std::string* guard = sts.label(planner::kShardSetLabel);
      if (guard == nullptr || *guard != shard_set.name) return std::nullopt;
      sts.owner_references.push_back({.api_version = "",
                                      .kind = std::string(planner::toString(kind)),
                                      .name = target->name,
                                      .uid = target->uid,
                                      .controller = true});
      observed.stateful_sets.push_back(std::move(sts));
    }
  }
  observed.target = std::move(*target);
  return observed;
}

void ShardSetController::noteLiveRead(const std::string& key, const Rounds& rounds,
                                      bool read_live_next) {
  LiveRead read{.read_live_next =
                    read_live_next || rounds.early.has_value() || rounds.failure.error.has_value()};
  if (!read.read_live_next) {
    read.target_version = rounds.live_target_version;
    read.shards_version = rounds.live_shards_version;
  }
  std::lock_guard lock(live_reads_mutex_);
  live_reads_[key] = read;
}

k8s::Result<ShardSetController::Observed> ShardSetController::observe(
    const api::ShardSet& shard_set, bool first_round) const {
  Observed observed;
  auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
  if (!kind || shard_set.spec.target_ref.name.empty()) return observed;  // the planner says why

  // The target's shards by their own labels, so a read costs this ShardSet's shards, not the
  // namespace's (docs/design.md §12): our guard label marks every shard of the ShardSet once it
  // claimed the target, retained or attached; the operator's name label also finds the attached
  // ones it has not labelled yet (a first claim, shards the operator just created). The lists are
  // at least as new as our newest StatefulSet write, so they show every write of the earlier
  // plans, and are sent at once with the target's read, on threads of their own: a round costs
  // the slowest read, not the sum. Each list costs the API server a pass over the namespace's
  // StatefulSets in its watch cache, so the name list is sent only when it can add a shard: when
  // our caches hold an attached shard without our label, or the lists without it turn out to lack
  // an active shard (below). Sent together, the guard list asks only for what the name list does
  // not return (`name!=` also matches a missing label), so no shard is sent and decoded twice.
  const std::uint64_t floor = own_writes_.newestStatefulSetWrite();
  auto list = [&](std::string selector) {
    return beside_.submit([this, &shard_set, floor, selector = std::move(selector)] {
      return listShards(client_, shard_set.ns, selector, floor);
    });
  };
  const std::string name_selector =
      std::string(planner::kOperatorNameLabel) + "=" + shard_set.spec.target_ref.name;
  std::string guard_selector = std::string(planner::kShardSetLabel) + "=" + shard_set.name;
  std::future<k8s::Result<std::vector<planner::ObservedStatefulSet>>> by_name;
  if (cacheShowsUnlabelledShards(shard_set)) {
    by_name = list(name_selector);
    guard_selector +=
        "," + std::string(planner::kOperatorNameLabel) + "!=" + shard_set.spec.target_ref.name;
  }
  // Nor the guard list, when it can add nothing a plan reads: a target no ShardSet has claimed
  // has no shard of ours but those the name list returns (the claim comes before any guard
  // label, and a release drops it last). So a first claim, whose caches show the target
  // unclaimed and no detached shard under this ShardSet's label, sends it only if the target
  // read live turns out missing or claimed after all.
  const bool guard_list_if_claimed = by_name.valid() && cacheShowsAFirstClaim(shard_set);
  std::future<k8s::Result<std::vector<planner::ObservedStatefulSet>>> by_shard_set;
  if (!guard_list_if_claimed) by_shard_set = list(guard_selector);

  // When the ShardSet itself says a transition is likely (its first round on a spec its status
  // has not seen), the guard is read beside the target instead of after it: the transition
  // starts one round trip sooner. Otherwise it is read below, only once the target shows that a
  // transition may run; the steady state never reads it.
  std::future<std::pair<bool, std::string>> guard_read;
  if (options_.guard_enforced && first_round && specUnobserved(shard_set)) {
    guard_read = beside_.submit([this, ns = shard_set.ns] {
      std::string why;
      const bool enforced = options_.guard_enforced(ns, &why);
      return std::make_pair(enforced, std::move(why));
    });
  }
  auto target = client_.get(targetResource(*kind), shard_set.ns, shard_set.spec.target_ref.name);
  if (!target) {
    if (!target.error().is(k8s::ErrorKind::NotFound)) return std::unexpected(target.error());
  } else {
    auto parsed = planner::parseTarget(*target, *kind);
    if (!parsed) {
      return k8s::makeError(k8s::ErrorKind::Decode,
                            std::string(planner::toString(*kind)) + " " + shard_set.ns + "/" +
                                shard_set.spec.target_ref.name + ": " + parsed.error().describe());
    }
    observed.target = std::move(*parsed);
  }
  // The claim and the guard are read while the lists are still on their way.
  auto with_shards = [&]() -> k8s::Result<Observed> {
    std::set<std::string> seen;  // a shard can match both selectors
    auto take = [&](auto& shards) -> k8s::Result<void> {
      auto listed = shards.get();
      if (!listed) return std::unexpected(listed.error());
      for (auto& sts : *listed) {
        if (seen.insert(sts.uid).second) observed.stateful_sets.push_back(std::move(sts));
      }
      return {};
    };
    const bool read_by_name = by_name.valid();
    for (auto* shards : {&by_name, &by_shard_set}) {
      if (!shards->valid()) continue;
      if (auto taken = take(*shards); !taken) return std::unexpected(taken.error());
    }
    // Without the name list, a shard it would add is an attached one without our label. One
    // the operator counts (an index below the target's spec.shards) is then missing here, and
    // the name list is read after all. What it would still add is an attached shard above the
    // operator's count, unlabelled, that our caches have not seen yet: one the operator created
    // for a higher count that has since dropped, which the planner's waits before lowering
    // spec.shards keep from happening (§11), and which the next reconcile reads once cached.
    if (!read_by_name &&
        !everyActiveShardListed(shard_set, observed.target, observed.stateful_sets)) {
      by_name = list(name_selector);
      if (auto taken = take(by_name); !taken) return std::unexpected(taken.error());
    }
    return std::move(observed);
  };
  if (guard_list_if_claimed &&
      (!observed.target || observed.target->annotation(planner::kClaimedByAnnotation) != nullptr)) {
    by_shard_set = list(guard_selector);
  }
  if (!observed.target) return with_shards();
  const planner::Target& t = *observed.target;

  if (const std::string* holder = t.annotation(planner::kClaimedByAnnotation);
      holder != nullptr && *holder != shard_set.name) {
    auto other = client_.get(shardSets(), shard_set.ns, *holder);
    if (other) {
      observed.claim_holder_exists = true;
    } else if (other.error().is(k8s::ErrorKind::NotFound)) {
      observed.claim_holder_exists = false;
    } else {
      return std::unexpected(other.error());
    }
  }
  // The guard matters only while a transition may run; read it live then, and only then.
  if (mayTransition(shard_set, t) && options_.guard_enforced) {
    std::string why;
    if (guard_read.valid()) {
      std::tie(observed.guard_enforced, why) = guard_read.get();
    } else {
      observed.guard_enforced = options_.guard_enforced(shard_set.ns, &why);
    }
    if (!observed.guard_enforced) {
      telemetry::logEvent(telemetry::LogLevel::Debug,
                          "guard not enforced, transitions use the fallback",
                          {{"key", k8s::objectKey(shard_set.ns, shard_set.name)}, {"why", why}});
    }
  }
  return with_shards();
}

planner::PlanInput ShardSetController::planInput(const api::ShardSet& shard_set, Observed observed,
                                                 planner::PlanPurpose purpose) const {
  return planner::PlanInput{
      .shard_set = shard_set,
      .target = std::move(observed.target),
      .stateful_sets = std::move(observed.stateful_sets),
      .now = clock_.now(),
      .purpose = purpose,
      .safety =
          {
              .guard_enforced = observed.guard_enforced,
              .settle_time = options_.settle_time,
              .pause_ack_timeout = options_.pause_ack_timeout,
          },
      .hold_transitions = transitionsHeld(k8s::objectKey(shard_set.ns, shard_set.name)).has_value(),
      .claim_holder_exists = observed.claim_holder_exists,
  };
}

std::optional<std::string> ShardSetController::transitionsHeld(const std::string& key) const {
  std::lock_guard lock(holds_mutex_);
  auto it = holds_.find(key);
  if (it == holds_.end() || clock_.monotonicNow() >= it->second.until) return std::nullopt;
  return it->second.why;
}

void ShardSetController::holdTransitions(const std::string& key, std::string why) {
  std::lock_guard lock(holds_mutex_);
  std::erase_if(holds_, [&](const auto& h) { return clock_.monotonicNow() >= h.second.until; });
  holds_[key] = Hold{clock_.deadlineAfter(options_.apply_failure_hold), std::move(why)};
}

ShardSetController::Rounds ShardSetController::planAndApply(const api::ShardSet& shard_set,
                                                            const k8s::InvolvedObject& subject,
                                                            const telemetry::LogContext& log,
                                                            planner::PlanPurpose purpose) {
  const std::string key = k8s::objectKey(shard_set.ns, shard_set.name);
  if (purpose == planner::PlanPurpose::Converge) {
    if (auto cached = observeCached(shard_set)) {
      Rounds rounds{.zones = cached->target->topologyZones()};
      rounds.plan = planner::planShardSet(planInput(shard_set, std::move(*cached), purpose));
      if (atRest(rounds.plan, shard_set)) {
        log.debug("planned from the caches: at rest");
        return rounds;
      }
    }
  }
  Rounds rounds = liveRounds(shard_set, subject, log, purpose);
  // Rounds that wrote end with a live read after their last write, which found nothing more to
  // do: what it saw is what the caches must have caught up with before the next reconcile may
  // plan from them. A release is followed by nothing planned from the caches until a live read
  // finds the ShardSet at rest.
  noteLiveRead(key, rounds, purpose == planner::PlanPurpose::Release);
  return rounds;
}

ShardSetController::Rounds ShardSetController::liveRounds(const api::ShardSet& shard_set,
                                                          const k8s::InvolvedObject& subject,
                                                          const telemetry::LogContext& log,
                                                          planner::PlanPurpose purpose) {
  const std::string key = k8s::objectKey(shard_set.ns, shard_set.name);
  // This reconcile's writes, recorded as its own (own_writes.h), also those the applier sends
  // from threads of its own.
  OwnWritesClient writes_as_this(client_, own_writes_, key);
  PlanApplier applier(writes_as_this, events_, log, beside_);
  Rounds rounds;
  for (int round = 0;; ++round) {
    auto observed = observe(shard_set, round == 0);
    if (!observed) {
      log.error("reading the target failed", {{"error", observed.error().describe()}});
      degraded("observe_failed");
      rounds.early = {.result = k8s::ReconcileResult::Error, .error = observed.error().describe()};
      return rounds;
    }
    rounds.zones = observed->target ? observed->target->topologyZones() : std::nullopt;
    rounds.live_target_version =
        observed->target ? revisionOf(observed->target->resource_version) : 0;
    rounds.live_shards_version = 0;
    for (const auto& sts : observed->stateful_sets) {
      rounds.live_shards_version =
          std::max(rounds.live_shards_version, revisionOf(sts.resource_version));
    }
    const bool paused_by_us = observed->target && pausedBy(*observed->target, shard_set.name);
    rounds.plan = planner::planShardSet(planInput(shard_set, std::move(*observed), purpose));
    const planner::Plan& plan = rounds.plan;
    if (plan.actions.empty()) {
      if (!paused_by_us || !waitOutDuringDrain(plan)) return rounds;
      log.info("shutting down; waited to finish the transition",
               {{"waited_for", plan.decision.waiting_for}});
      --round;  // a wait is not a round of writes
      continue;
    }
    if (round == options_.max_rounds) {
      log.warn("actions left after the last round",
               {{"actions", plan.actions.size()}, {"rounds", round}});
      rounds.early = {.result = k8s::ReconcileResult::Requeue};
      return rounds;
    }
    auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
    ApplyOutcome outcome = applier.apply(plan, targetResource(*kind), shard_set.ns, subject);
    if (!outcome.error && purpose == planner::PlanPurpose::Converge &&
        std::ranges::all_of(plan.actions, [](const planner::Action& a) {
          return a.type == planner::ActionType::ClaimTarget ||
                 a.type == planner::ActionType::LabelStatefulSet;
        })) {
      // A claim and guard labels change neither the target's spec nor which shards it has: what
      // the next round would read is what was read, plus these writes. Their echoes bring the
      // caches there, which is where a read would have come from for the shards anyway (the
      // API server's watch cache); the next reconcile plans from them (observeCached) once they
      // hold the versions the writes were answered with. A list per shard set less per claim,
      // and no read at all of a shard the operator created later.
      rounds.confirm_from_caches = true;
      rounds.live_target_version = std::max(rounds.live_target_version, outcome.target_version);
      rounds.live_shards_version =
          std::max(rounds.live_shards_version, outcome.stateful_set_version);
      return rounds;
    }
    if (!outcome.error) continue;
    if (outcome.needsReplan()) {
      log.info("planning again",
               {{"action", outcome.failed_action}, {"error", outcome.error->describe()}});
      continue;
    }
    log.error("action failed",
              {{"action", outcome.failed_action}, {"error", outcome.error->describe()}});
    degraded("apply_failed");
    const bool first_refusal = outcome.isPermanent() && !transitionsHeld(key);
    rounds.failure = std::move(outcome);
    if (!first_refusal) return rounds;
    // Refused for good: retrying the same write cannot help, and the target must not stay
    // paused waiting for it. Hold new transitions and plan again, which now undoes this one.
    holdTransitions(key, rounds.failure.failed_action + ": " + rounds.failure.error->describe());
    log.warn(
        "undoing the transition; transitions held",
        {{"hold_seconds",
          std::chrono::duration_cast<std::chrono::seconds>(options_.apply_failure_hold).count()}});
  }
}

bool ShardSetController::waitOutDuringDrain(const planner::Plan& plan) {
  // Room left in the drain after the wait, for the reads and writes that follow it.
  constexpr auto kMargin = std::chrono::seconds(2);
  if (plan.decision.waiting_for.empty() || !plan.requeue_after) return false;
  std::unique_lock lock(drain_mutex_);
  if (!drain_deadline_ || leadership_lost_) return false;
  const auto wake = clock_.deadlineAfter(*plan.requeue_after);
  if (wake + kMargin > *drain_deadline_) return false;
  // Woken early only when the Lease is lost: then another replica may lead, and nothing more is
  // written from here.
  return !clock_.waitUntil(lock, drain_cv_, wake, [this] { return leadership_lost_; });
}

void ShardSetController::leadershipLost() {
  {
    std::lock_guard lock(drain_mutex_);
    leadership_lost_ = true;
  }
  drain_cv_.notify_all();
}

k8s::Result<planner::Plan> ShardSetController::dryRun(const std::string& ns,
                                                      const std::string& name,
                                                      std::optional<int32_t> shards) {
  auto object = client_.get(shardSets(), ns, name);
  if (!object) return std::unexpected(object.error());
  auto shard_set = api::decodeShardSet(*object);
  if (!shard_set) {
    return k8s::makeError(k8s::ErrorKind::Decode,
                          ns + "/" + name + ": " + shard_set.error().describe());
  }
  if (shards) shard_set->spec.shards = *shards;
  auto observed = observe(*shard_set, true);
  if (!observed) return std::unexpected(observed.error());
  return planner::planShardSet(
      planInput(*shard_set, std::move(*observed), planner::PlanPurpose::Converge));
}

}  // namespace shardscaler::controller
