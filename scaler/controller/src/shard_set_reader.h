// What a reconcile reads (docs/design.md §9, §12): the target and its StatefulSets live from the
// API server, since a plan that writes must see the previous plan's writes, which the caches may
// not have yet; or from the caches, for a ShardSet at rest whose plan writes nothing but its
// status. It never writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/controller/own_writes.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/task_pool.h"
#include "shardscaler/retention/planner.h"

#include "shard_set_caches.h"

namespace shardscaler::controller {

// The target and its shards as one read saw them.
struct Observed {
  std::optional<retention::Target> target;
  std::vector<retention::ObservedStatefulSet> stateful_sets;
  std::optional<bool> claim_holder_exists;
  bool guard_enforced = false;
};

// What the last live read of each ShardSet saw: the target's resourceVersion and the newest of
// its shards'. A plan from the caches is trusted only from caches at least that new.
// Thread-safety: all methods from any thread.
class LiveReadRecord {
 public:
  struct Entry {
    std::uint64_t target_version = 0;
    std::uint64_t shards_version = 0;
    // Its last reconcile stopped early, failed or released: the next one reads live whatever
    // the caches.
    bool read_live_next = false;
  };
  Entry get(const std::string& key) const;
  void set(const std::string& key, Entry entry);
  void forget(const std::string& key);

 private:
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// Whether the admission guard is enforced for ShardSets in namespace `ns`; when not, *why says
// why. Unset: never (the fallback applies).
using GuardEnforced = std::function<bool(const std::string& ns, std::string* why)>;

// Thread-safety: const methods from any thread, as long as the caches and the record are.
class ShardSetReader {
 public:
  // All references must outlive the reader; `side_requests` runs the reads sent beside the
  // caller's own.
  ShardSetReader(k8s::KubeClient& client, const ShardSetCaches& caches, const OwnWrites& own_writes,
                 k8s::TaskPool& side_requests, GuardEnforced guard_enforced);

  // The target and its shards, as of now; the guard when a transition may run. `first_round`:
  // the first read of a reconcile (or of a dry run), which may read the guard early.
  k8s::Result<Observed> observe(const api::ShardSet& shard_set, bool first_round) const;

  // The target and its shards as the caches hold them, when a plan from them can be trusted to
  // say that nothing but the status is to be written (docs/design.md §12): the caches have
  // synced and are at least as new as this ShardSet's last live read (which came after every
  // target and StatefulSet write of its reconcile), that reconcile ended with a plan that had
  // nothing left to write, every shard they hold for the target carries this ShardSet's guard
  // label, and the target shows no transition. nullopt: read live.
  std::optional<Observed> observeCached(const api::ShardSet& shard_set) const;

  LiveReadRecord& liveReads() { return live_reads_; }

 private:
  class LiveObservation;

  k8s::KubeClient& client_;
  const ShardSetCaches& caches_;
  const OwnWrites& own_writes_;
  k8s::TaskPool& side_requests_;
  GuardEnforced guard_enforced_;
  LiveReadRecord live_reads_;
};

}  // namespace shardscaler::controller
