// One randomized "nothing is lost" sequence (issue 9, item 5) on the real control plane: a fresh
// namespace with a Prometheus and a ShardSet, the operator emulator with a lagging view and slow
// syncs, the real shardscaler behind an ApiFaultProxy, with or without the shard guard; scale
// writes as kubectl and an HPA make them, kill -9 and restarts; then the invariants over what the
// API server recorded. It asserts nothing itself, and leaves no process or webhook behind.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/e2e/lag_invariants.h"
#include "shardscaler/testenv/api_fault_proxy.h"

namespace shardscaler::e2e {

enum class GuardMode {
  Guarded,   // the guard's webhook is installed for the namespace and shardscaler serves it
  Fallback,  // no guard: transitions wait for the pause to be acknowledged and the settle time
};
std::string_view toString(GuardMode mode);

// Who shardscaler and the operator emulator act as.
enum class Identities {
  // shardscaler as the control plane's admin (system:masters), the operator as user-2.
  Apart,
  // Both as user-2, with shardscaler's RBAC from deploy/base bound to it: the sidecar install as
  // it was, shardscaler using the operator pod's ServiceAccount.
  Shared,
  // As deploy/overlays/prometheus-operator-sidecar renders them: the operator as ServiceAccount
  // prometheus-operator, shardscaler as its own ServiceAccount, with the token of the Secret
  // shardscaler-token that the overlay adds.
  Sidecar,
};
std::string_view toString(Identities identities);

struct LagStep {
  enum class Kind {
    KubectlScale,  // kubectl scale shardset/main --replicas=N
    HpaScale,      // GET and PUT of the ShardSet's scale subresource, as the HPA controller does
    Kill,          // SIGKILL shardscaler, start it again after down_for
  };
  Kind kind = Kind::KubectlScale;
  std::chrono::milliseconds wait_before{0};
  int shards = 0;                         // the scale kinds
  std::chrono::milliseconds down_for{0};  // Kill
};

struct LagPlan {
  std::uint64_t seed = 1;
  GuardMode mode = GuardMode::Fallback;
  bool retain = true;  // whenScaled Retain (retentionPeriod 1h), else Delete
  int initial_shards = 2;
  int min_shards = 1;
  int max_shards = 5;
  std::chrono::milliseconds settle_time{2000};  // --settle-time
  // The emulator: its StatefulSet and target views trail the API server by these, and each sync
  // holds sync_latency + [0, jitter] between reading the target and acting on it.
  std::chrono::milliseconds statefulset_lag{0};
  std::chrono::milliseconds target_lag{0};
  std::chrono::milliseconds sync_latency{0};
  std::chrono::milliseconds sync_latency_jitter{0};
  // The emulator's --shard-retention: the operator's own retention of excess shards (v0.92+),
  // which holds a claimed target's at Retain; false: an older operator, which deletes them.
  bool operator_shard_retention = true;
  testenv::ApiFaultRates faults;  // between shardscaler and the API server
  std::vector<LagStep> steps;
  // The longest the target may stay paused after the last thing that started or extended its
  // transition (a scale write that changed the wanted count, shardscaler starting again).
  std::chrono::milliseconds pause_bound{7000};
  std::chrono::seconds converge_timeout{60};  // after the last step
  std::vector<std::string> shardscaler_args;  // more `shardscaler run` flags
  Identities identities = Identities::Apart;

  std::string describe() const;
};

// Under Identities::Apart and Shared the operator emulator acts as the control plane's plain
// user-<this> (with the operator's rights), so that the guard judges its writes: the admin user is
// exempt.
inline constexpr int kLagOperatorUser = 2;

// The fault rates' path filter: every request but the TokenReview of shardscaler's own token (a
// real API server never answers it with 409, which the guard rightly takes as final) and the
// webhook configuration's reads and caBundle patches (a failed read makes that round use the
// fallback, which the fallback sequences cover; the guarded bound would then be the fallback's).
inline constexpr const char* kLagFaultPaths =
    R"(^(?!/apis/(authentication|admissionregistration)\.k8s\.io/))";

// Everything drawn from `seed`: policy, start, lags and sync latency (guarded: lag up to 2 s;
// fallback: lag + target lag + sync latency + jitter up to 90 % of the 2 s settle time), fault
// rates, and `steps` steps.
LagPlan randomLagPlan(std::uint64_t seed, GuardMode mode, int steps);

// What the sequences did and met, summed over many.
struct LagCounts {
  int sequences = 0;
  int guarded = 0;
  int fallback = 0;
  int failed = 0;  // sequences with at least one violation
  int steps = 0;
  int scale_writes = 0;
  int kills = 0;
  testenv::ApiFaultCounts faults;
  int guard_denials = 0;       // the operator's writes the guard refused
  int operator_dry_runs = 0;   // server-side dry-run deletes of an active shard as the operator
  int guard_unreachable = 0;   // ... refused because the guard could not be called (killed)
  int operator_relabels = 0;   // retained shards the operator labelled back (and got away with)
  int deletions_observed = 0;  // StatefulSet deletions that started, from the history
  int deleted_by_shardscaler = 0;
  int deleted_by_operator = 0;
  int pauses = 0;
  std::chrono::milliseconds longest_pause_guarded{0};   // past its anchor
  std::chrono::milliseconds longest_pause_fallback{0};  // past its anchor
  std::chrono::milliseconds longest_convergence{0};     // after the last step
  int violations = 0;

  void add(const LagCounts& other);
  std::string format() const;
};

struct LagOutcome {
  LagCounts counts;
  std::vector<Violation> violations;
  std::string summary;  // one line
  std::string report;   // the plan, the timeline, the violations and the evidence around them
};

// Runs one sequence; its logs go to <testLogDir()>/seq-<seed> and are removed when it passes.
// Throws std::runtime_error when the set-up itself fails (no namespace, a process does not start).
LagOutcome runLagSequence(const LagPlan& plan);

}  // namespace shardscaler::e2e
