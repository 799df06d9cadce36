#include "shard_set_reader.h"

#include <future>
#include <memory>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "shardscaler/api/api_resources.h"
#include "shardscaler/base/log.h"
#include "shardscaler/k8s_meta/object_meta.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/shard_inventory.h"
#include "shardscaler/resharding/resharding.h"
#include "shardscaler/resharding/scrape_classes.h"

#include "object_fields.h"

namespace shardscaler::controller {

using k8s::Json;

namespace {

using ShardList = k8s::Result<std::vector<planner::ObservedStatefulSet>>;

// The StatefulSets one list returns, skipping what is not a StatefulSet at all. The list is
// served by the API server's watch cache, once it holds `floor` (NotOlderThan; 0: as it is): a
// quorum list with a label selector reads every StatefulSet of the namespace from etcd and filters
// them, which made each reconcile cost the server O(namespace). Without a floor (our writes were
// answered with versions that cannot be ordered) the list is a quorum list after all.
ShardList listShards(k8s::KubeClient& client, const std::string& ns, const std::string& selector,
                     std::optional<std::uint64_t> floor) {
  // A plan reads only the shards' metadata: the API server sends PartialObjectMetadata (without
  // spec and status), and managedFields are skipped by the SAX decoder, never built.
  static const auto kFields = std::make_shared<const k8s::FieldMask>(
      k8s::FieldMask::keepNone().keep({"metadata"}).drop({"metadata", "managedFields"}));
  k8s::ListOptions opts{.label_selector = selector,
                        .resource_version = "0",
                        .metadata_only = true,
                        .fields = kFields};
  if (!floor) {
    opts.resource_version.clear();
  } else if (*floor > 0) {
    opts.resource_version = std::to_string(*floor);
    opts.resource_version_match = "NotOlderThan";
  }
  auto list = k8s::listAll(client, k8s::resources::statefulSets(), ns, opts);
  if (!list) return std::unexpected(list.error());
  std::vector<planner::ObservedStatefulSet> out;
  for (const Json& item : (*list)["items"]) {
    auto sts = planner::parseStatefulSet(item);
    if (!sts) {
      base::logEvent(base::LogLevel::Warn, "ignoring malformed StatefulSet",
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

// A transition may run (so the guard is to be read): the target is paused by this ShardSet or
// another, or its shard count is not the one the ShardSet asks for.
bool mayTransition(const api::ShardSet& shard_set, const planner::Target& t) {
  return t.pausedBy(shard_set.name) || shard_set.spec.shards.value_or(1) != t.effectiveShards() ||
         t.annotation(api::kPausedByAnnotation) != nullptr;
}

// spec.resharding needs the target's scrape objects: LowChurn is asked for, or shardscaler's
// rules are on the target (turning them off must know whether an object names their class).
bool readsScrapeObjects(const api::ShardSet& shard_set, const planner::Target& t) {
  return shard_set.spec.resharding == api::kReshardingLowChurn ||
         resharding::carriesOwnRules(t.scrape.scrape_classes);
}

// A cached StatefulSet as the planner reads one: owned by the target, or when detached by the
// ShardSet, which the cache does not keep (a shard is taken as theirs by the guard label; see
// observeCached). A detach that moves the reference writes shardscaler.io/deletion-deadline, and
// so does an adoption: a detached shard without it is an older version's, still the target's, so
// the plan from the caches adopts it and is not at rest, and a live plan does the adopting.
planner::ObservedStatefulSet fromCache(const Json& object, const api::ShardSet& shard_set,
                                       const planner::Target& target, planner::TargetKind kind) {
  planner::ObservedStatefulSet sts;
  sts.name = stringAt(object, "metadata", "name");
  sts.resource_version = stringAt(object, "metadata", "resourceVersion");
  sts.being_deleted = !field(object, "metadata", "deletionTimestamp").is_null();
  for (const auto& [into, from] :
       {std::pair{&sts.labels, "labels"}, std::pair{&sts.annotations, "annotations"}}) {
    const Json& map = field(object, "metadata", from);
    if (!map.is_object()) continue;
    for (const auto& [k, v] : map.items()) {
      if (v.is_string()) into->emplace(k, v.get<std::string>());
    }
  }
  const std::string* retained = sts.label(api::kRetainedLabel);
  if (retained != nullptr && *retained == "true" && !shard_set.uid.empty() &&
      sts.annotation(api::kDeletionDeadlineAnnotation) != nullptr) {
    sts.owner_references.push_back({.api_version = std::string(api::kApiVersion),
                                    .kind = std::string(api::kShardSetKind),
                                    .name = shard_set.name,
                                    .uid = shard_set.uid,
                                    .controller = true});
  } else {
    sts.owner_references.push_back({.api_version = "",
                                    .kind = std::string(planner::toString(kind)),
                                    .name = target.name,
                                    .uid = target.uid,
                                    .controller = true});
  }
  return sts;
}

}  // namespace

ShardSetReader::ShardSetReader(k8s::KubeClient& client, const ShardSetCaches& caches,
                               const Expectations& expectations, k8s::TaskPool& side_requests,
                               GuardEnforced guard_enforced, DrainCheck drain_check,
                               const k8s::Clock& clock)
    : client_(client),
      caches_(caches),
      expectations_(expectations),
      side_requests_(side_requests),
      guard_enforced_(std::move(guard_enforced)),
      drain_check_(std::move(drain_check)),
      target_writers_(client, clock),
      scrape_objects_(client, clock) {}

void ShardSetReader::forget(const std::string& key) { scrape_objects_.forget(key); }

std::map<std::string, planner::DrainReading, std::less<>> ShardSetReader::readDrains(
    const api::ShardSet& shard_set, const std::optional<planner::Target>& target,
    const planner::DrainPolicy& policy, const planner::Decision& decision) const {
  std::map<std::string, planner::DrainReading, std::less<>> readings;
  ingestion::DrainRequest request{
      .source = {.ns = shard_set.ns,
                 .kind = planner::parseTargetKind(shard_set.spec.target_ref.kind)
                             .value_or(planner::TargetKind::Prometheus),
                 .target_name = shard_set.spec.target_ref.name,
                 .shard_set = shard_set.name,
                 .tls = {.https = target && target->web_tls,
                         .client_auth_type = target ? target->web_client_auth_type : ""}}};
  for (const auto& check : decision.drain_checks) {
    auto sts = client_.get(k8s::resources::statefulSets(), shard_set.ns, check.stateful_set);
    if (!sts) {
      readings[check.stateful_set] = {
          .reason = "cannot read StatefulSet " + check.stateful_set + ": " + sts.error().describe(),
          .failed = true};
      continue;
    }
    const Json& replicas = field(*sts, "spec", "replicas");
    request.shards.push_back(
        {.stateful_set = check.stateful_set,
         .replicas = replicas.is_number_integer() ? replicas.get<int32_t>() : 1,
         .detached_at = check.detached_at,
         .remote_writes = check.remote_writes});
  }
  request.survivors = decision.drain_survivors;
  if (!request.shards.empty() && drain_check_) readings.merge(drain_check_(policy, request));
  return readings;
}

std::optional<Observed> ShardSetReader::observeCached(const api::ShardSet& shard_set) const {
  auto caches = caches_.forTarget(shard_set);
  if (!caches) return std::nullopt;
  const auto floor = expectations_.cacheFloor(k8s::objectKey(shard_set.ns, shard_set.name));
  if (!floor) return std::nullopt;
  const k8s::ObjectPtr cached_target =
      caches->targets->store().get(shard_set.ns, shard_set.spec.target_ref.name);
  if (!cached_target) return std::nullopt;
  auto target = planner::parseTarget(*cached_target, caches->kind);
  // The shard cache has applied every StatefulSet event up to its resourceVersion, so it shows
  // at least the newest shard the last live read saw (and every deletion before it).
  if (!target ||
      !floor->shownBy(target->resource_version, caches->shards->lastSyncResourceVersion())) {
    return std::nullopt;
  }
  if (mayTransition(shard_set, *target)) return std::nullopt;
  // Coverage is read live, at least every kScrapeObjectsMaxAge while it matters.
  if (readsScrapeObjects(shard_set, *target) &&
      !scrape_objects_.readWithin(k8s::objectKey(shard_set.ns, shard_set.name),
                                  resharding::kScrapeObjectsMaxAge)) {
    return std::nullopt;
  }
  if (const std::string* holder = target->annotation(api::kClaimedByAnnotation);
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
    for (const k8s::ObjectPtr& object : caches->shards->store().byIndex(index, value)) {
      planner::ObservedStatefulSet sts = fromCache(*object, shard_set, *target, caches->kind);
      const std::string* guard = sts.label(api::kShardSetLabel);
      if (guard == nullptr || *guard != shard_set.name) return std::nullopt;
      observed.stateful_sets.push_back(std::move(sts));
    }
  }
  observed.target = std::move(*target);
  target_writers_.fill(observed);
  return observed;
}

// One live read of a ShardSet's target and shards, as named steps. The target's shards are read
// by their own labels, so a read costs this ShardSet's shards, not the namespace's
// (docs/design/reads.md): our guard label marks every shard of the ShardSet once it claimed the
// target, retained or attached; the operator's name label also finds the attached ones it has not
// labelled yet (a first claim, shards the operator just created). The lists are at least as new as
// our newest StatefulSet write, so they show every write of the earlier plans, and are sent at once
// with the target's read, on threads of their own: a round costs the slowest read, not the sum.
class ShardSetReader::LiveObservation {
 public:
  LiveObservation(const ShardSetReader& reader, const api::ShardSet& shard_set,
                  planner::TargetKind kind, planner::PlanPurpose purpose)
      : reader_(reader),
        shard_set_(shard_set),
        kind_(kind),
        release_(purpose == planner::PlanPurpose::Release),
        floor_(reader.expectations_.newestStatefulSetWrite()),
        name_selector_(std::string(api::kOperatorNameLabel) + "=" + shard_set.spec.target_ref.name),
        guard_selector_(std::string(api::kShardSetLabel) + "=" + shard_set.name) {}
  // A step that failed returns while the reads sent beside it still run on the pool, and they
  // refer to this observation and to the ShardSet: wait for them.
  ~LiveObservation() {
    for (auto* shards : {&by_name_, &by_shard_set_}) {
      if (shards->valid()) shards->wait();
    }
    if (guard_read_.valid()) guard_read_.wait();
  }
  LiveObservation(const LiveObservation&) = delete;
  LiveObservation& operator=(const LiveObservation&) = delete;

  k8s::Result<Observed> run(bool first_round) {
    sendShardLists();
    if (first_round) sendEarlyGuardRead();
    if (auto read = readTarget(); !read) return std::unexpected(read.error());
    sendDeferredGuardList();
    if (observed_.target) {
      if (auto read = readClaimHolder(); !read) return std::unexpected(read.error());
      readGuard();
    }
    return collectShards();
  }

 private:
  std::future<ShardList> list(std::string selector) {
    return reader_.side_requests_.submit([this, selector = std::move(selector)] {
      return listShards(reader_.client_, shard_set_.ns, selector, floor_);
    });
  }

  // Each list costs the API server a pass over the namespace's StatefulSets in its watch cache,
  // so the name list is sent only when it can add a shard: when our caches hold an attached shard
  // without our label, or the lists without it turn out to lack an active shard
  // (collectShards). Sent together, the guard list asks only for what the name list does not
  // return (`name!=` also matches a missing label), so no shard is sent and decoded twice. Nor is
  // the guard list sent when it can add nothing a plan reads: a target no ShardSet has claimed
  // has no shard of ours but those the name list returns (the claim comes before any guard
  // label, and a release drops it last). So a first claim, whose caches show the target
  // unclaimed and no detached shard under this ShardSet's label, sends it only if the target
  // read live turns out missing or claimed after all (sendDeferredGuardList). A release trusts
  // no cache: the StatefulSet informer may trail the target's, and show a shard the last round
  // detached still attached (unlabelled, under a claim the target no longer carries), so a
  // release sends both lists.
  void sendShardLists() {
    if (release_ || reader_.caches_.showUnlabelledShards(shard_set_)) {
      by_name_ = list(name_selector_);
      guard_selector_ +=
          "," + std::string(api::kOperatorNameLabel) + "!=" + shard_set_.spec.target_ref.name;
    }
    guard_list_deferred_ =
        !release_ && by_name_.valid() && reader_.caches_.showAFirstClaim(shard_set_);
    if (!guard_list_deferred_) by_shard_set_ = list(guard_selector_);
  }

  // When the ShardSet itself says a transition is likely (its first round on a spec its status
  // has not seen), the guard is read beside the target instead of after it: the transition
  // starts one round trip sooner. Otherwise readGuard reads it only once the target shows that
  // a transition may run; the steady state never reads it.
  void sendEarlyGuardRead() {
    if (!reader_.guard_enforced_ || !specUnobserved(shard_set_)) return;
    guard_read_ = reader_.side_requests_.submit([this] {
      std::string why;
      const bool enforced = reader_.guard_enforced_(shard_set_.ns, &why);
      return std::make_pair(enforced, std::move(why));
    });
  }

  k8s::Result<void> readTarget() {
    auto target = reader_.client_.get(planner::targetResource(kind_), shard_set_.ns,
                                      shard_set_.spec.target_ref.name);
    if (!target) {
      if (target.error().is(k8s::ErrorKind::NotFound)) return {};
      return std::unexpected(target.error());
    }
    auto parsed = planner::parseTarget(*target, kind_);
    if (!parsed) {
      return k8s::makeError(k8s::ErrorKind::Decode,
                            std::string(planner::toString(kind_)) + " " + shard_set_.ns + "/" +
                                shard_set_.spec.target_ref.name + ": " + parsed.error().describe());
    }
    observed_.target = std::move(*parsed);
    return {};
  }

  void sendDeferredGuardList() {
    if (!guard_list_deferred_) return;
    if (!observed_.target || observed_.target->annotation(api::kClaimedByAnnotation) != nullptr) {
      by_shard_set_ = list(guard_selector_);
    }
  }

  // Another ShardSet's claim is taken over only when that ShardSet no longer exists.
  k8s::Result<void> readClaimHolder() {
    const std::string* holder = observed_.target->annotation(api::kClaimedByAnnotation);
    if (holder == nullptr || *holder == shard_set_.name) return {};
    auto other = reader_.client_.get(api::shardSets(), shard_set_.ns, *holder);
    if (other) {
      observed_.claim_holder_exists = true;
    } else if (other.error().is(k8s::ErrorKind::NotFound)) {
      observed_.claim_holder_exists = false;
    } else {
      return std::unexpected(other.error());
    }
    return {};
  }

  // The guard matters only while a transition may run; read it live then, and only then.
  void readGuard() {
    if (!mayTransition(shard_set_, *observed_.target) || !reader_.guard_enforced_) return;
    std::string why;
    if (guard_read_.valid()) {
      std::tie(observed_.guard_enforced, why) = guard_read_.get();
    } else {
      observed_.guard_enforced = reader_.guard_enforced_(shard_set_.ns, &why);
    }
    if (!observed_.guard_enforced) {
      base::logEvent(base::LogLevel::Debug, "guard not enforced, transitions use the fallback",
                     {{"key", k8s::objectKey(shard_set_.ns, shard_set_.name)}, {"why", why}});
    }
  }

  k8s::Result<void> take(std::future<ShardList>& shards) {
    auto listed = shards.get();
    if (!listed) return std::unexpected(listed.error());
    for (auto& sts : *listed) {
      if (seen_.insert(sts.uid).second) observed_.stateful_sets.push_back(std::move(sts));
    }
    return {};
  }

  // Without the name list, a shard it would add is an attached one without our label. One the
  // operator counts (an index below the target's spec.shards) is then missing here, and the name
  // list is read after all. What it would still add is an attached shard above the operator's
  // count, unlabelled, that our caches have not seen yet: one the operator created for a higher
  // count that has since dropped, which the planner's waits before lowering spec.shards keep from
  // happening (docs/design/lagging-operator.md), and which the next reconcile reads once cached.
  k8s::Result<Observed> collectShards() {
    const bool read_by_name = by_name_.valid();
    for (auto* shards : {&by_name_, &by_shard_set_}) {
      if (!shards->valid()) continue;
      if (auto taken = take(*shards); !taken) return std::unexpected(taken.error());
    }
    if (!read_by_name &&
        !everyActiveShardListed(shard_set_, observed_.target, observed_.stateful_sets)) {
      by_name_ = list(name_selector_);
      if (auto taken = take(by_name_); !taken) return std::unexpected(taken.error());
    }
    return std::move(observed_);
  }

  const ShardSetReader& reader_;
  const api::ShardSet& shard_set_;
  const planner::TargetKind kind_;
  const bool release_;
  const std::optional<std::uint64_t> floor_;
  const std::string name_selector_;
  std::string guard_selector_;
  bool guard_list_deferred_ = false;
  std::future<ShardList> by_name_;
  std::future<ShardList> by_shard_set_;
  std::future<std::pair<bool, std::string>> guard_read_;
  std::set<std::string> seen_;  // a shard can match both selectors
  Observed observed_;
};

k8s::Result<Observed> ShardSetReader::observe(const api::ShardSet& shard_set, bool first_round,
                                              planner::PlanPurpose purpose) const {
  auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
  if (!kind || shard_set.spec.target_ref.name.empty()) return Observed{};  // the planner says why
  // A stale list of the namespace's HPAs is renewed beside the reads, not after them: a
  // transition's first round would otherwise wait for it once a minute.
  std::future<void> hpas = target_writers_.refreshHpas(shard_set.ns, side_requests_);
  LiveObservation observation(*this, shard_set, *kind, purpose);
  auto observed = observation.run(first_round);
  if (hpas.valid()) hpas.wait();
  if (observed && observed->target) {
    target_writers_.noteLiveRead(*observed->target);
    target_writers_.fill(*observed);
    if (readsScrapeObjects(shard_set, *observed->target)) {
      observed->scrape_objects =
          scrape_objects_.read(k8s::objectKey(shard_set.ns, shard_set.name), *observed->target,
                               &observed->scrape_objects_error);
      if (!observed->scrape_objects) {
        base::logEvent(base::LogLevel::Warn, "reading the target's scrape objects failed",
                       {{"key", k8s::objectKey(shard_set.ns, shard_set.name)},
                        {"error", observed->scrape_objects_error}});
      }
    }
  }
  return observed;
}

}  // namespace shardscaler::controller
