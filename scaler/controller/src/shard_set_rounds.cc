// The reconciler's read-plan-apply rounds: what a reconcile reads (ShardSetReader), how write
// failures are met, and when a ShardSet at rest is planned from the caches instead.
#include <algorithm>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/planner/naming.h"

#include "object_fields.h"
#include "shard_set_reconciler.h"

namespace shardscaler::controller {
namespace {

ingestion::WebTls webTlsOf(const planner::Target& target) {
  return {.https = target.web_tls, .client_auth_type = target.web_client_auth_type};
}

// A plan from the caches is kept only when it says the ShardSet is at rest on a target it holds:
// nothing to write but the status, nothing to wait for, nothing to report.
bool atRest(const planner::Plan& plan, const api::ShardSet& shard_set) {
  const planner::Decision& d = plan.decision;
  return plan.actions.empty() && plan.events.empty() && d.mode == planner::PlanMode::Converge &&
         d.waiting_for.empty() && d.abandoned_because.empty() && d.drain_checks.empty() &&
         d.draining.empty() && !d.target_paused_by_us && !d.target_paused_by_others &&
         d.claimed_by == shard_set.name && !d.resharding_needs_objects;
}

// A plan of only a claim and guard labels, which changes neither the target's spec nor which
// shards it has.
bool onlyClaimsAndGuards(const planner::Plan& plan) {
  return std::ranges::all_of(plan.actions, [](const planner::Action& a) {
    return a.type == planner::ActionType::ClaimTarget ||
           a.type == planner::ActionType::LabelStatefulSet ||
           a.type == planner::ActionType::AdoptStatefulSet;
  });
}

}  // namespace

planner::PlanInput ShardSetReconciler::planInput(const api::ShardSet& shard_set, Observed observed,
                                                 planner::PlanPurpose purpose) const {
  return planner::PlanInput{
      .shard_set = shard_set,
      .target = std::move(observed.target),
      .stateful_sets = std::move(observed.stateful_sets),
      .now = parts_.clock.now(),
      .purpose = purpose,
      .safety =
          {
              .guard_enforced = observed.guard_enforced,
              .settle_time = options_.settle_time,
              .pause_ack_timeout = options_.pause_ack_timeout,
              .reload_floor = options_.drain_reload_floor,
          },
      .target_writers = std::move(observed.target_writers),
      .target_hpas = std::move(observed.target_hpas),
      .hold_transitions =
          parts_.holds.heldBecause(k8s::objectKey(shard_set.ns, shard_set.name)).has_value(),
      .claim_holder_exists = observed.claim_holder_exists,
      .reattach_refused =
          parts_.holds.refusedReattaches(k8s::objectKey(shard_set.ns, shard_set.name)),
      .scrape_objects = std::move(observed.scrape_objects),
      .scrape_objects_error = std::move(observed.scrape_objects_error),
  };
}

planner::Plan ShardSetReconciler::planWithDrains(planner::PlanInput input) const {
  planner::Plan plan = planner::planShardSet(input);
  const planner::Decision& decision = plan.decision;
  if (decision.drain_checks.empty() || !decision.drain) return plan;
  // The plan needs to know whether its due shards drained: read them, and plan again.
  input.drain_readings =
      parts_.reader.readDrains(input.shard_set, input.target, *decision.drain, decision);
  return planner::planShardSet(input);
}

void ShardSetReconciler::expectAfter(const std::string& key, const Rounds& rounds,
                                     bool read_live_next) {
  if (read_live_next || rounds.stopped_with || rounds.failure.error) {
    parts_.expectations.expectLiveRead(key);
    return;
  }
  parts_.expectations.expectCaches(key, rounds.live_read);
}

ShardSetReconciler::Rounds ShardSetReconciler::planAndApply(const api::ShardSet& shard_set,
                                                            const k8s::InvolvedObject& subject,
                                                            const base::LogContext& log,
                                                            planner::PlanPurpose purpose) {
  const std::string key = k8s::objectKey(shard_set.ns, shard_set.name);
  if (purpose == planner::PlanPurpose::Converge) {
    if (auto cached = parts_.reader.observeCached(shard_set)) {
      Rounds rounds{.zones = cached->target->topologyZones(), .web_tls = webTlsOf(*cached->target)};
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
  expectAfter(key, rounds, purpose == planner::PlanPurpose::Release);
  return rounds;
}

ShardSetReconciler::Rounds ShardSetReconciler::liveRounds(const api::ShardSet& shard_set,
                                                          const k8s::InvolvedObject& subject,
                                                          const base::LogContext& log,
                                                          planner::PlanPurpose purpose) {
  const std::string key = k8s::objectKey(shard_set.ns, shard_set.name);
  // This reconcile's writes, recorded as its own (expectations.h), also those the applier sends
  // from threads of its own.
  RecordingClient writes_as_this(parts_.client, parts_.expectations, key);
  PlanApplier applier(writes_as_this, parts_.events, log, parts_.side_requests);
  Rounds rounds;
  for (int round = 0;; ++round) {
    auto observed = parts_.reader.observe(shard_set, round == 0, purpose);
    if (!observed) {
      log.error("reading the target failed", {{"error", observed.error().describe()}});
      degraded("observe_failed");
      rounds.stopped_with = {.result = k8s::ReconcileResult::Error,
                             .error = observed.error().describe()};
      return rounds;
    }
    rounds.zones = observed->target ? observed->target->topologyZones() : std::nullopt;
    rounds.web_tls = observed->target ? webTlsOf(*observed->target) : ingestion::WebTls{};
    rounds.live_read = {.target_version =
                            observed->target ? revisionOf(observed->target->resource_version) : 0};
    for (const auto& sts : observed->stateful_sets) {
      rounds.live_read.shards_version =
          std::max(rounds.live_read.shards_version, revisionOf(sts.resource_version));
    }
    if (!observed->scrape_objects_error.empty()) degraded("scrape_objects_read_failed");
    const bool paused_by_us = observed->target && observed->target->pausedBy(shard_set.name);
    rounds.plan = planWithDrains(planInput(shard_set, std::move(*observed), purpose));
    const planner::Plan& plan = rounds.plan;
    if (plan.actions.empty()) {
      // While draining, a transition under way waits out a short wait and finishes.
      if (!paused_by_us || plan.decision.waiting_for.empty() || !plan.requeue_after ||
          !parts_.drain.waitOut(*plan.requeue_after)) {
        return rounds;
      }
      log.info("shutting down; waited to finish the transition",
               {{"waited_for", plan.decision.waiting_for}});
      --round;  // a wait is not a round of writes
      continue;
    }
    if (round == options_.max_rounds) {
      log.warn("actions left after the last round",
               {{"actions", plan.actions.size()}, {"rounds", round}});
      rounds.stopped_with = {.result = k8s::ReconcileResult::Requeue};
      return rounds;
    }
    auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
    ApplyOutcome outcome =
        applier.apply(plan, planner::targetResource(*kind), shard_set.ns, subject);
    if (!outcome.error) observeTransition(shard_set, plan);
    if (!outcome.error && purpose == planner::PlanPurpose::Converge && onlyClaimsAndGuards(plan)) {
      // What the next round would read is what was read, plus these writes. Their echoes bring
      // the caches there, which is where a read would have come from for the shards anyway (the
      // API server's watch cache); the next reconcile plans from them (observeCached) once they
      // hold the versions the writes were answered with.
      rounds.awaits_echoes = true;
      rounds.live_read.target_version =
          std::max(rounds.live_read.target_version, outcome.target_version);
      rounds.live_read.shards_version =
          std::max(rounds.live_read.shards_version, outcome.stateful_set_version);
      return rounds;
    }
    if (!afterApply(key, std::move(outcome), rounds, log)) return rounds;
  }
}

bool ShardSetReconciler::afterApply(const std::string& key, ApplyOutcome outcome, Rounds& rounds,
                                    const base::LogContext& log) {
  if (!outcome.error) return true;
  if (outcome.needsReplan()) {
    log.info("planning again",
             {{"action", outcome.failed_action}, {"error", outcome.error->describe()}});
    return true;
  }
  if (outcome.refusedByGuard()) {
    // What the guard read live disagrees with what this plan was made from, for now: retried
    // with backoff, not held.
    log.warn("the shard guard refused a write of shardscaler's own",
             {{"action", outcome.failed_action}, {"error", outcome.error->describe()}});
    degraded("guard_refused_own_write");
    rounds.failure = std::move(outcome);
    return false;
  }
  log.error("action failed",
            {{"action", outcome.failed_action}, {"error", outcome.error->describe()}});
  degraded("apply_failed");
  const bool permanent = outcome.isPermanent();
  const bool first_refusal = permanent && !parts_.holds.heldBecause(key);
  // An undo re-attaches the shards the operator still expects before it resumes the target: one
  // refused for good would keep the target paused for as long as it is refused.
  const bool refused_reattach =
      permanent && outcome.failed_type == planner::ActionType::ReattachStatefulSet;
  rounds.failure = std::move(outcome);
  if (first_refusal) {
    // Refused for good: retrying the same write cannot help, and the target must not stay paused
    // waiting for it. Hold new transitions and plan again, which now undoes this one.
    parts_.holds.hold(key, rounds.failure.failed_action + ": " + rounds.failure.error->describe());
    log.warn("undoing the transition; transitions held",
             {{"hold_seconds",
               std::chrono::duration_cast<std::chrono::seconds>(parts_.holds.holdTime()).count()}});
  }
  if (refused_reattach) {
    parts_.holds.refuseReattach(key, rounds.failure.failed_object);
    log.warn("re-attach refused for good; the target resumes without it, the shard stays retained",
             {{"statefulset", rounds.failure.failed_object}});
    degraded("reattach_refused");
  }
  return first_refusal || refused_reattach;
}

k8s::Result<planner::Plan> ShardSetReconciler::dryRun(const std::string& ns,
                                                      const std::string& name,
                                                      std::optional<int32_t> shards) {
  auto object = parts_.client.get(api::shardSets(), ns, name);
  if (!object) return std::unexpected(object.error());
  auto shard_set = api::decodeShardSet(*object);
  if (!shard_set) {
    return k8s::makeError(k8s::ErrorKind::Decode,
                          ns + "/" + name + ": " + shard_set.error().describe());
  }
  if (shards) shard_set->spec.shards = *shards;
  auto observed = parts_.reader.observe(*shard_set, true, planner::PlanPurpose::Converge);
  if (!observed) return std::unexpected(observed.error());
  return planWithDrains(
      planInput(*shard_set, std::move(*observed), planner::PlanPurpose::Converge));
}

}  // namespace shardscaler::controller
