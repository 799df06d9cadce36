// What a reconcile reads (docs/design.md, docs/design/reads.md): the target and its StatefulSets
// live from the API server, since a plan that writes must see the previous plan's writes, which the
// caches may not have yet; or from the caches, for a ShardSet at rest whose plan writes nothing but
// its status. It never writes.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/controller/expectations.h"
#include "shardscaler/controller/shard_set_controller.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/planner/planner.h"

#include "scrape_objects_reader.h"
#include "shard_set_caches.h"

namespace shardscaler::controller {

// The target and its shards as one read saw them.
struct Observed {
  std::optional<planner::Target> target;
  std::vector<planner::ObservedStatefulSet> stateful_sets;
  // Other writers of the target's spec.shards/spec.paused (planner::PlanInput).
  std::vector<planner::SpecWriter> target_writers;
  std::vector<std::string> target_hpas;
  std::optional<bool> claim_holder_exists;
  bool guard_enforced = false;
  // The scrape objects the target selects, read when low-churn re-sharding is asked for or its
  // rules are on the target (planner::PlanInput::scrape_objects).
  std::optional<std::vector<resharding::ScrapeObject>> scrape_objects;
  std::string scrape_objects_error;
};

// Whether the admission guard is enforced for ShardSets in namespace `ns`; when not, *why says
// why. Unset: never (the fallback applies).
using GuardEnforced = std::function<bool(const std::string& ns, std::string* why)>;

// The guard's status per namespace for the shardscaler_guard_enforced metric, read at most once
// a minute (transitions read it live, not from here). Thread-safety: any thread.
class GuardStatusCache {
 public:
  GuardStatusCache(const k8s::Clock& clock, GuardEnforced read)
      : clock_(clock), read_(std::move(read)) {}
  // nullopt when no guard is served at all (no reader).
  std::optional<bool> enforced(const std::string& ns);

 private:
  // A read under way is shared: the workers that start together after a restart wait for one
  // read instead of each sending its own.
  struct Entry {
    std::shared_future<bool> enforced;
    k8s::Clock::MonotonicTime read_at;
  };
  const k8s::Clock& clock_;
  GuardEnforced read_;
  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// Who else writes a target's spec.shards: its field managers as the last live read of it saw them
// (the caches drop managedFields, so a plan from the caches reports what the last live read
// found), and the HPAs aimed at it, listed once a minute per namespace.
// Thread-safety: all methods from any thread.
class TargetWriters {
 public:
  static constexpr std::chrono::minutes kHpaListPeriod{1};

  TargetWriters(k8s::KubeClient& client, const k8s::Clock& clock)
      : client_(client), clock_(clock) {}

  void noteLiveRead(const planner::Target& target);
  // Fills observed.target_writers and target_hpas for `observed.target`; lists the HPAs when the
  // namespace's list is stale.
  void fill(Observed& observed);
  // Lists `ns`'s HPAs on `pool` when its list is stale, so that the list runs beside a live read.
  // Invalid when the list is fresh. The future must be waited for before `this` goes.
  std::future<void> refreshHpas(const std::string& ns, k8s::TaskPool& pool);

 private:
  std::vector<std::string> hpasAimedAt(const planner::Target& target);
  // The namespace's list read less than kHpaListPeriod ago or being read (one read shared by
  // every caller); when neither, `read` is set and the caller fulfils it with listHpas.
  std::shared_future<k8s::Json> hpaList(const std::string& ns,
                                        std::optional<std::promise<k8s::Json>>& read);
  k8s::Json listHpas(const std::string& ns);

  struct HpaList {
    k8s::Clock::MonotonicTime read_at;
    // (kind, name) of each scaleTargetRef, with the HPA's name
    std::shared_future<k8s::Json> items;
  };
  k8s::KubeClient& client_;
  const k8s::Clock& clock_;
  std::mutex mutex_;
  std::map<std::string, std::vector<planner::SpecWriter>> writers_;  // by target uid
  std::map<std::string, HpaList> hpas_;                              // by namespace
};

// Thread-safety: const methods from any thread, as long as the caches and the expectations are.
class ShardSetReader {
 public:
  // All references must outlive the reader; `side_requests` runs the reads sent beside the
  // caller's own.
  ShardSetReader(k8s::KubeClient& client, const ShardSetCaches& caches,
                 const Expectations& expectations, k8s::TaskPool& side_requests,
                 GuardEnforced guard_enforced, DrainCheck drain_check, const k8s::Clock& clock);

  // The target and its shards, as of now; the guard when a transition may run. `first_round`:
  // the first read of a reconcile (or of a dry run), which may read the guard early. A release
  // lists the shards by both labels whatever the caches show: a shard it misses keeps the
  // ShardSet's owner reference after the ShardSet is gone, and garbage collection takes it.
  k8s::Result<Observed> observe(const api::ShardSet& shard_set, bool first_round,
                                planner::PlanPurpose purpose) const;

  // The target and its shards as the caches hold them, when a plan from them can be trusted to
  // say that nothing but the status is to be written (docs/design/reads.md): the caches have
  // synced and show the floor its Expectations name (what its last live read saw, which came
  // after every target and StatefulSet write of its reconcile), that reconcile ended with a plan
  // that had nothing left to write, every shard they hold for the target carries this ShardSet's
  // guard label, and the target shows no transition. nullopt: read live.
  std::optional<Observed> observeCached(const api::ShardSet& shard_set) const;

  // The drain readings of the due shards `decision` asks about: each StatefulSet's replicas read
  // live, then the drain's PromQL or the shards' own pods, with the surviving shards' reload. A
  // StatefulSet that cannot be read reads as not drained (a failed reading). `target` (as planned)
  // says how its pods serve their web port.
  std::map<std::string, planner::DrainReading, std::less<>> readDrains(
      const api::ShardSet& shard_set, const std::optional<planner::Target>& target,
      const planner::DrainPolicy& policy, const planner::Decision& decision) const;

  // Forgets what was read for a ShardSet that is gone.
  void forget(const std::string& key);

 private:
  class LiveObservation;

  k8s::KubeClient& client_;
  const ShardSetCaches& caches_;
  const Expectations& expectations_;
  k8s::TaskPool& side_requests_;
  GuardEnforced guard_enforced_;
  DrainCheck drain_check_;
  mutable TargetWriters target_writers_;
  mutable ScrapeObjectsReader scrape_objects_;
};

}  // namespace shardscaler::controller
