#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "shardscaler/e2e/lag_sequence.h"

namespace shardscaler::e2e {
namespace {

using std::chrono::milliseconds;

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  long long between(long long lo, long long hi) {
    return hi <= lo ? lo : std::uniform_int_distribution<long long>(lo, hi)(rng_);
  }
  milliseconds ms(long long lo, long long hi) { return milliseconds(between(lo, hi)); }
  double rate(double hi) { return std::uniform_real_distribution<double>(0.0, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

 private:
  std::mt19937_64 rng_;
};

std::string ms(milliseconds d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

std::string_view toString(GuardMode mode) {
  return mode == GuardMode::Guarded ? "guarded" : "fallback";
}

LagPlan randomLagPlan(std::uint64_t seed, GuardMode mode, int steps) {
  Draw draw(seed);
  LagPlan plan;
  plan.seed = seed;
  plan.mode = mode;
  plan.retain = draw.chance(0.6);
  plan.initial_shards = static_cast<int>(draw.between(1, 4));
  if (mode == GuardMode::Guarded) {
    plan.statefulset_lag = draw.ms(0, 2000);
    plan.target_lag = draw.ms(0, 500);
    plan.sync_latency = draw.ms(0, 1000);
    plan.sync_latency_jitter = draw.ms(0, 1000);
  } else {
    // Everything the operator's view and its syncs may trail by must stay below the settle time
    // (docs/design/lagging-operator.md); 10 % is left for the API server and the emulator's own
    // work.
    const long long budget = plan.settle_time.count() * 9 / 10;
    plan.statefulset_lag = draw.ms(0, budget);
    long long left = budget - plan.statefulset_lag.count();
    plan.target_lag = draw.ms(0, std::min(300LL, left));
    left -= plan.target_lag.count();
    plan.sync_latency = draw.ms(0, left);
    left -= plan.sync_latency.count();
    plan.sync_latency_jitter = draw.ms(0, left);
  }
  // Guard or not, a transition may hold the target paused for the acknowledgement and the settle
  // time (shards not created yet, or attached but not expected: docs/design/lagging-operator.md),
  // and kills and API faults add their retries.
  plan.pause_bound = plan.settle_time + milliseconds(5000);
  testenv::ApiFaultRates& f = plan.faults;
  f.server_error = draw.rate(0.05);
  f.conflict = draw.rate(0.08);
  f.too_many_requests = draw.rate(0.03);
  f.cut_watch = draw.rate(0.8);
  f.latency = draw.rate(0.2);
  f.latency_max = milliseconds(200);
  f.path_regex = kLagFaultPaths;
  for (int i = 0; i < steps; ++i) {
    LagStep step;
    // Some steps land in the middle of the previous transition, most after a while.
    step.wait_before = draw.chance(0.3) ? draw.ms(0, 300) : draw.ms(300, 3500);
    const auto kind = draw.between(0, 9);
    if (kind < 4) {
      step.kind = LagStep::Kind::KubectlScale;
    } else if (kind < 8) {
      step.kind = LagStep::Kind::HpaScale;
    } else {
      step.kind = LagStep::Kind::Kill;
      step.down_for = draw.ms(0, 2000);
    }
    // One beyond each clamp, so that clamping is exercised too.
    step.shards = static_cast<int>(draw.between(plan.min_shards - 1, plan.max_shards + 1));
    plan.steps.push_back(step);
  }
  // Drawn last, so that a seed's other draws are what they were before identities were drawn.
  // Identities matter only to the guard: half the guarded sequences run as the sidecar install
  // does, or as it did (shardscaler sharing the operator's user).
  if (mode == GuardMode::Guarded) {
    const auto who = draw.between(0, 3);
    plan.identities = who < 2    ? Identities::Apart
                      : who == 2 ? Identities::Shared
                                 : Identities::Sidecar;
  }
  return plan;
}

std::string_view toString(Identities identities) {
  switch (identities) {
    case Identities::Apart:
      return "apart";
    case Identities::Shared:
      return "shared";
    case Identities::Sidecar:
      return "sidecar";
  }
  return "?";
}

std::string LagPlan::describe() const {
  std::string out = fmt::format(
      "seed={} mode={} identities={} policy={} shards={} (min {} max {}) settle-time={} "
      "statefulset-lag={} "
      "target-lag={} sync-latency={}+[0,{}] faults: 500 {:.3f}, 409 {:.3f}, 429 {:.3f}, "
      "cut-watch {:.3f}, latency {:.3f} (<= {}); pause bound {}{}\nsteps:",
      seed, toString(mode), toString(identities), retain ? "Retain" : "Delete", initial_shards,
      min_shards, max_shards, ms(settle_time), ms(statefulset_lag), ms(target_lag),
      ms(sync_latency), ms(sync_latency_jitter), faults.server_error, faults.conflict,
      faults.too_many_requests, faults.cut_watch, faults.latency, ms(faults.latency_max),
      ms(pause_bound), operator_shard_retention ? "" : "; an operator without shard retention");
  for (const auto& a : shardscaler_args) out += " " + a;
  for (const LagStep& s : steps) {
    out += " [wait " + ms(s.wait_before) + ", ";
    switch (s.kind) {
      case LagStep::Kind::KubectlScale:
        out += "kubectl scale " + std::to_string(s.shards) + "]";
        break;
      case LagStep::Kind::HpaScale:
        out += "scale subresource " + std::to_string(s.shards) + "]";
        break;
      case LagStep::Kind::Kill:
        out += "kill -9, down " + ms(s.down_for) + "]";
        break;
    }
  }
  return out;
}

void LagCounts::add(const LagCounts& o) {
  sequences += o.sequences;
  guarded += o.guarded;
  fallback += o.fallback;
  failed += o.failed;
  steps += o.steps;
  scale_writes += o.scale_writes;
  kills += o.kills;
  faults.requests += o.faults.requests;
  faults.forwarded += o.faults.forwarded;
  faults.server_error += o.faults.server_error;
  faults.conflict += o.faults.conflict;
  faults.too_many_requests += o.faults.too_many_requests;
  faults.cut_watch += o.faults.cut_watch;
  faults.latency += o.faults.latency;
  faults.upstream_errors += o.faults.upstream_errors;
  guard_denials += o.guard_denials;
  operator_dry_runs += o.operator_dry_runs;
  guard_unreachable += o.guard_unreachable;
  operator_relabels += o.operator_relabels;
  deletions_observed += o.deletions_observed;
  deleted_by_shardscaler += o.deleted_by_shardscaler;
  deleted_by_operator += o.deleted_by_operator;
  pauses += o.pauses;
  longest_pause_guarded = std::max(longest_pause_guarded, o.longest_pause_guarded);
  longest_pause_fallback = std::max(longest_pause_fallback, o.longest_pause_fallback);
  longest_convergence = std::max(longest_convergence, o.longest_convergence);
  violations += o.violations;
}

std::string LagCounts::format() const {
  return fmt::format(
      "sequences: {} ({} guarded, {} fallback), failed: {}\n"
      "steps: {} ({} scale writes), kills (kill -9 + restart): {}\n"
      "API requests through the fault proxy: {}; injected faults: {} (500: {}, 409: {}, 429: {}, "
      "cut watches: {}, added latency: {})\n"
      "guard denials of the operator's writes: {}; refused because the guard was down: {}; "
      "dry-run deletes of an active shard as the operator (all refused): {}\n"
      "retained shards the operator labelled back: {}\n"
      "StatefulSet deletions: {} observed, {} by shardscaler, {} by the operator\n"
      "pauses: {}; longest past its cause: guarded {:.2f} s, fallback {:.2f} s; longest "
      "convergence after the last step: {:.2f} s\n"
      "violations: {}",
      sequences, guarded, fallback, failed, steps, scale_writes, kills, faults.requests,
      faults.injected(), faults.server_error, faults.conflict, faults.too_many_requests,
      faults.cut_watch, faults.latency, guard_denials, guard_unreachable, operator_dry_runs,
      operator_relabels, deletions_observed, deleted_by_shardscaler, deleted_by_operator, pauses,
      longest_pause_guarded.count() / 1000.0, longest_pause_fallback.count() / 1000.0,
      longest_convergence.count() / 1000.0, violations);
}

}  // namespace shardscaler::e2e
