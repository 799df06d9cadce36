#include "shardscaler/controller/shardset_controller.h"

#include <algorithm>
#include <mutex>

#include "shardscaler/api/field_names.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/controller/api_resources.h"
#include "shardscaler/controller/shard_set_status.h"
#include "shardscaler/ingestion/ingestion_source.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"
#include "shardscaler/telemetry/logging.h"

#include "object_fields.h"

namespace shardscaler::controller {
namespace {

using k8s::Json;
using k8s::ObjectPtr;

constexpr std::string_view kQueueName = "shardset";

// What a watch event must change for a reconcile to be worth it: status-only updates (our own
// status writes, the operator's, the StatefulSet controller's) do not count. An update that
// changes nothing at all is a resync, which does.
bool worthReconciling(const ObjectPtr& old_object, const ObjectPtr& new_object) {
  if (k8s::resourceVersionOf(*old_object) == k8s::resourceVersionOf(*new_object)) return true;
  for (std::string_view f : {"generation", "labels", "annotations", "deletionTimestamp"}) {
    if (field(*old_object, "metadata", f) != field(*new_object, "metadata", f)) return true;
  }
  return false;
}

// Whether a ShardSet changed, in what worthReconciling compares, in its bound-target annotation
// only (the one such field our own writes set).
bool onlyBoundTargetMoved(const Json& old_object, const Json& new_object) {
  for (std::string_view f : {"generation", "labels", "deletionTimestamp"}) {
    if (field(old_object, "metadata", f) != field(new_object, "metadata", f)) return false;
  }
  auto others = [](const Json& object) {
    Json annotations = field(object, "metadata", "annotations");
    if (annotations.is_object()) annotations.erase(std::string(kBoundTargetAnnotation));
    return annotations.is_object() && annotations.empty() ? Json() : annotations;
  };
  return others(old_object) == others(new_object);
}

// The caches decide *when* a ShardSet is reconciled, and what a reconcile that has nothing but
// its status to write plans from (observeCached, shardset_rounds.cc); any other plan reads live.
// So each keeps what maps an event to its ShardSets, what tells a change worth a reconcile from
// one that is not (worthReconciling), and what that steady-state plan reads, and nothing else.

// StatefulSets (as PartialObjectMetadata): namespace and the operator's name and mode labels
// (-> the target's ShardSets), the guard label (-> its ShardSet), and what a plan reads that can
// change: generation (spec.replicas), deletion, the shard index and retained labels, the
// deadline annotations. Not the uid and owner references (0.5 KB a StatefulSet in the DOM):
// a plan from the caches takes a shard as the target's by our guard label (observeCached).
std::shared_ptr<const k8s::FieldMask> statefulSetFields() {
  auto mask = k8s::FieldMask::keepNone();
  for (std::string_view f :
       {"namespace", "name", "resourceVersion", "generation", "deletionTimestamp"}) {
    mask.keep({"metadata", f});
  }
  for (std::string_view label :
       {planner::kOperatorNameLabel, planner::kOperatorModeLabel, planner::kOperatorShardLabel,
        planner::kShardSetLabel, planner::kRetainedLabel}) {
    mask.keep({"metadata", "labels", label});
  }
  for (std::string_view annotation :
       {planner::kDeletionTimestampAnnotation, planner::kDetachedAtAnnotation}) {
    mask.keep({"metadata", "annotations", annotation});
  }
  return std::make_shared<const k8s::FieldMask>(std::move(mask));
}

// Targets: the key, what marks a spec or ownership change (generation, deletion, our claim and
// pause annotations), whether the operator acknowledged a pause (status.paused and the
// conditions' observedGeneration), so that a transition waiting for it wakes when it comes, and
// the uid and spec fields the planner reads (planner::parseTarget).
std::shared_ptr<const k8s::FieldMask> targetFields() {
  auto mask = k8s::FieldMask::keepNone();
  for (std::string_view f :
       {"namespace", "name", "uid", "resourceVersion", "generation", "deletionTimestamp"}) {
    mask.keep({"metadata", f});
  }
  for (std::string_view f : {"shards", "replicas", "paused", "retention", "retentionSize",
                             "shardRetentionPolicy", "shardingStrategy"}) {
    mask.keep({"spec", f});
  }
  for (std::string_view annotation :
       {planner::kClaimedByAnnotation, planner::kPausedByAnnotation, planner::kPausedAtAnnotation,
        planner::kScaledDownAtAnnotation}) {
    mask.keep({"metadata", "annotations", annotation});
  }
  mask.keep({"status", "paused"}).keep({"status", "conditions", "observedGeneration"});
  return std::make_shared<const k8s::FieldMask>(std::move(mask));
}

// ShardSets are read whole by reconcile (from this cache): everything but managedFields.
std::shared_ptr<const k8s::FieldMask> shardSetFields() {
  return std::make_shared<const k8s::FieldMask>(
      k8s::FieldMask::keepAll().drop({"metadata", "managedFields"}));
}

// ShardSets by the targets they name ("<namespace>/<Kind>/<name>"): spec.targetRef, and the
// target they are bound to (kBoundTargetAnnotation) while they still have to release it.
constexpr const char* kTargetIndex = "target";

std::string targetIndexValue(std::string_view ns, std::string_view kind, std::string_view name) {
  std::string value(ns);
  value.append("/").append(kind).append("/").append(name);
  return value;
}

std::vector<std::string> shardSetTargets(const Json& shard_set) {
  std::vector<std::string> values;
  const std::string ns = stringAt(shard_set, "metadata", "namespace");
  const Json& ref = field(shard_set, api::field::kSpec, api::field::kTargetRef);
  if (ref.is_object()) {
    const Json& kind = ref.value(api::field::kKind, Json());
    const Json& name = ref.value(api::field::kName, Json());
    if (kind.is_string() && name.is_string()) {
      values.push_back(targetIndexValue(ns, kind.get<std::string>(), name.get<std::string>()));
    }
  }
  const Json& annotations = field(shard_set, "metadata", "annotations");
  if (annotations.is_object()) {
    auto bound = annotations.find(kBoundTargetAnnotation);
    if (bound != annotations.end() && bound->is_string()) {
      std::string value = ns + "/" + bound->get<std::string>();
      if (std::ranges::find(values, value) == values.end()) values.push_back(std::move(value));
    }
  }
  return values;
}

std::vector<std::string> attachedTo(const Json& sts) {
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object()) return {};
  auto name = labels.find(planner::kOperatorNameLabel);
  if (name == labels.end() || !name->is_string()) return {};
  return {stringAt(sts, "metadata", "namespace") + "/" + name->get<std::string>()};
}

std::vector<std::string> detachedFor(const Json& sts) {
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object() || labels.contains(planner::kOperatorNameLabel)) return {};
  auto shard_set = labels.find(planner::kShardSetLabel);
  if (shard_set == labels.end() || !shard_set->is_string()) return {};
  return {stringAt(sts, "metadata", "namespace") + "/" + shard_set->get<std::string>()};
}

std::optional<planner::TargetKind> kindOfMode(std::string_view mode) {
  if (mode == "server") return planner::TargetKind::Prometheus;
  if (mode == "agent") return planner::TargetKind::PrometheusAgent;
  return std::nullopt;
}

}  // namespace

class ShardSetController::QueueMetrics final : public k8s::WorkQueueObserver {
 public:
  explicit QueueMetrics(telemetry::Metrics* metrics) : metrics_(metrics) {}
  void onDepth(std::size_t depth) override {
    if (metrics_ != nullptr) metrics_->setWorkQueueDepth(kQueueName, depth);
  }
  void onAdd() override {
    if (metrics_ != nullptr) metrics_->incWorkQueueAdds(kQueueName);
  }
  void onRetry() override {
    if (metrics_ != nullptr) metrics_->incWorkQueueRetries(kQueueName);
  }

 private:
  telemetry::Metrics* metrics_;
};

ShardSetController::ShardSetController(k8s::KubeClient& client, const k8s::Clock& clock,
                                       k8s::EventRecorder& events, telemetry::Metrics* metrics,
                                       ControllerOptions options,
                                       ingestion::IngestionSource* ingestion)
    : client_(client),
      clock_(clock),
      events_(events),
      metrics_(metrics),
      options_(std::move(options)),
      ingestion_(ingestion),
      queue_metrics_(std::make_unique<QueueMetrics>(metrics)),
      beside_((PlanApplier::kMaxWritesInFlight - 1) *
              static_cast<std::size_t>(std::max(options_.workers, 1))),
      runtime_(
          clock, [this](const std::string& key) { return reconcile(key); }, runtimeOptions()) {
  if (options_.namespaces.empty()) options_.namespaces.emplace_back();
}

ShardSetController::~ShardSetController() { stop(std::chrono::seconds(0)); }

// client-go's WaitForCacheSync before the workers: a reconcile that starts while the StatefulSet
// informer still lists is queued again by each add the list delivers (a restart of a loaded
// namespace did ~1.6 reconciles per ShardSet). The queue collects those adds meanwhile, one
// entry per ShardSet; the wait goes in steps of kCacheSyncStep, so a stop is seen within one.
k8s::ControllerOptions ShardSetController::runtimeOptions() {
  return k8s::ControllerOptions{
      .workers = options_.workers,
      .queue_observer = queue_metrics_.get(),
      .wait_ready = [this](std::chrono::nanoseconds step) { return waitForSync(step); },
      .ready_step = kCacheSyncStep,
      .on_not_ready =
          [this] {
            std::string why;
            hasSynced(&why);
            telemetry::logEvent(telemetry::LogLevel::Info, "workers wait for the caches to sync",
                                {{"pending", why}});
          },
      .on_reconciled =
          [metrics = metrics_](const std::string&, const ReconcileOutcome& outcome,
                               std::chrono::nanoseconds took) {
            if (metrics == nullptr) return;
            metrics->observeReconcile(outcome.result, std::chrono::duration<double>(took).count());
          },
  };
}

void ShardSetController::addInformer(const k8s::Resource& resource, const std::string& ns,
                                     k8s::InformerOptions opts, k8s::EventHandlers handlers,
                                     std::vector<NamedInformer>& into) {
  opts.ns = ns;
  opts.resync_period = options_.resync_period;
  if (metrics_ != nullptr) {
    opts.on_watch_restart = [metrics = metrics_, name = resource.resource](std::string_view why) {
      metrics->incWatchRestart(name, why);
    };
  }
  auto informer = std::make_unique<k8s::Informer>(client_, resource, std::move(opts), clock_);
  informer->addEventHandlers(std::move(handlers));
  into.push_back({resource.describe() + (ns.empty() ? "" : " in " + ns), std::move(informer)});
}

void ShardSetController::startInformers() {
  const auto shard_set_fields = shardSetFields();
  const auto target_fields = targetFields();
  const auto stateful_set_fields = statefulSetFields();
  for (const std::string& ns : options_.namespaces) {
    addInformer(shardSets(), ns,
                {.fields = shard_set_fields, .indexers = {{kTargetIndex, shardSetTargets}}},
                shardSetHandlers(), shard_set_informers_);
    NamespaceCaches caches{.ns = ns};
    addInformer(prometheuses(), ns, {.fields = target_fields},
                targetHandlers(planner::TargetKind::Prometheus), other_informers_);
    caches.prometheuses = other_informers_.back().informer.get();
    addInformer(prometheusAgents(), ns, {.fields = target_fields},
                targetHandlers(planner::TargetKind::PrometheusAgent), other_informers_);
    caches.prometheus_agents = other_informers_.back().informer.get();
    // Attached and retained shards both keep the shard label; only the name label moves.
    addInformer(k8s::resources::statefulSets(), ns,
                {.label_selector = std::string(planner::kOperatorShardLabel),
                 .metadata_only = true,
                 .fields = stateful_set_fields,
                 .indexers = {{kAttachedIndex, attachedTo}, {kDetachedIndex, detachedFor}}},
                statefulSetHandlers(), other_informers_);
    caches.stateful_sets = other_informers_.back().informer.get();
    namespace_caches_.push_back(std::move(caches));
  }
  for (auto* list : {&shard_set_informers_, &other_informers_}) {
    for (auto& i : *list) i.informer->start();
  }
}

bool ShardSetController::hasSynced(std::string* why) const {
  std::vector<std::string> pending;
  for (const auto* list : {&shard_set_informers_, &other_informers_}) {
    for (const auto& i : *list) {
      if (!i.informer->hasSynced()) pending.push_back(i.description);
    }
  }
  if (why != nullptr && !pending.empty()) {
    *why = "informers not synced:";
    for (const auto& p : pending) *why += " " + p;
  }
  return pending.empty() && !shard_set_informers_.empty();
}

bool ShardSetController::waitForSync(std::chrono::nanoseconds timeout) const {
  const auto deadline = clock_.deadlineAfter(timeout);
  for (const auto* list : {&shard_set_informers_, &other_informers_}) {
    for (const auto& i : *list) {
      auto left = deadline - clock_.monotonicNow();
      if (!i.informer->waitForSync(std::max<std::chrono::nanoseconds>(left, {}))) return false;
    }
  }
  return true;
}

void ShardSetController::startWorkers() { runtime_.start(); }

bool ShardSetController::stop(std::chrono::nanoseconds drain_timeout) {
  {
    std::lock_guard lock(drain_mutex_);
    drain_deadline_ = clock_.deadlineAfter(drain_timeout);
  }
  const bool drained = runtime_.shutDown(drain_timeout);
  for (auto* list : {&shard_set_informers_, &other_informers_}) {
    for (auto& i : *list) i.informer->requestStop();  // all at once: each watch takes ~1 s
  }
  for (auto* list : {&shard_set_informers_, &other_informers_}) {
    for (auto& i : *list) i.informer->stop();
  }
  return drained;
}

void ShardSetController::enqueue(const std::string& key) { runtime_.enqueue(key); }

k8s::EventHandlers ShardSetController::shardSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { enqueue(k8s::objectKey(*o)); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer = own_writes_.echoWriter(shardSets(), *old_object, *new_object);
            if (!worthReconciling(old_object, new_object)) return;
            const std::string key = k8s::objectKey(*new_object);
            // Our bound-target annotation coming back. It is a merge patch without precondition
            // and no read follows it, so the event may also carry someone else's change (a
            // relist shows only the newest version): then it queues as any event does.
            if (writer == key && onlyBoundTargetMoved(*old_object, *new_object)) return;
            enqueue(key);
          },
      .on_delete =
          [this](const ObjectPtr& o) {
            own_writes_.forget(shardSets(), *o);
            enqueue(k8s::objectKey(*o));
          },
  };
}

// Events that only echo a write of a ShardSet's reconcile do not queue that ShardSet again
// (they still queue every other ShardSet they map to). Every StatefulSet and target write is
// followed by a read in the same reconcile (the next round of planAndApply, or a requeue when
// it stops early) that is at least as new as the write, so anything the echoed version holds,
// even another client's change it folded in, that reconcile reads anyway.
k8s::EventHandlers ShardSetController::targetHandlers(planner::TargetKind kind) {
  auto on_change = [this, kind](const ObjectPtr& o, const std::string& echo_of) {
    enqueueForTarget(stringAt(*o, "metadata", "namespace"), kind, stringAt(*o, "metadata", "name"),
                     echo_of);
  };
  return k8s::EventHandlers{
      .on_add = [on_change](const ObjectPtr& o) { on_change(o, {}); },
      .on_update =
          [this, kind, on_change](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer =
                own_writes_.echoWriter(targetResource(kind), *old_object, *new_object);
            // The operator's pause report counts too: a transition may wait for it.
            if (worthReconciling(old_object, new_object) ||
                old_object->value("status", Json()) != new_object->value("status", Json())) {
              on_change(new_object, writer.value_or(""));
            }
          },
      .on_delete =
          [this, kind, on_change](const ObjectPtr& o) {
            own_writes_.forget(targetResource(kind), *o);
            on_change(o, {});
          },
  };
}

k8s::EventHandlers ShardSetController::statefulSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { enqueueForStatefulSet(*o); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            const auto writer =
                own_writes_.echoWriter(k8s::resources::statefulSets(), *old_object, *new_object);
            if (worthReconciling(old_object, new_object)) {
              // A detach or re-attach moves the StatefulSet between owners' label sets: tell
              // both the old and the new one.
              enqueueForStatefulSet(*old_object, writer.value_or(""));
              enqueueForStatefulSet(*new_object, writer.value_or(""));
            }
          },
      .on_delete =
          [this](const ObjectPtr& o) {
            own_writes_.forget(k8s::resources::statefulSets(), *o);
            enqueueForStatefulSet(*o);
          },
  };
}

bool ShardSetController::cacheShowsUnlabelledShards(const api::ShardSet& shard_set) const {
  if (namespace_caches_.empty()) return true;  // a dry run: no caches
  const std::string value = shard_set.ns + "/" + shard_set.spec.target_ref.name;
  for (const NamespaceCaches& caches : namespace_caches_) {
    const k8s::Informer* informer = caches.stateful_sets;
    if (!informer->hasSynced()) return true;
    for (const ObjectPtr& sts : informer->store().byIndex(kAttachedIndex, value)) {
      const Json& labels = field(*sts, "metadata", "labels");
      auto guard = labels.find(planner::kShardSetLabel);
      if (guard == labels.end() || *guard != shard_set.name) return true;
    }
  }
  return false;
}

std::optional<ShardSetController::TargetCaches> ShardSetController::syncedCaches(
    const api::ShardSet& shard_set) const {
  auto kind = planner::parseTargetKind(shard_set.spec.target_ref.kind);
  if (!kind || shard_set.spec.target_ref.name.empty()) return std::nullopt;
  auto caches = std::ranges::find_if(namespace_caches_, [&](const NamespaceCaches& c) {
    return c.ns.empty() || c.ns == shard_set.ns;
  });
  if (caches == namespace_caches_.end()) return std::nullopt;
  TargetCaches found{
      .kind = *kind,
      .targets = *kind == planner::TargetKind::Prometheus ? caches->prometheuses
                                                          : caches->prometheus_agents,
      .shards = caches->stateful_sets,
  };
  if (!found.targets->hasSynced() || !found.shards->hasSynced()) return std::nullopt;
  return found;
}

bool ShardSetController::cacheShowsAFirstClaim(const api::ShardSet& shard_set) const {
  auto caches = syncedCaches(shard_set);
  if (!caches) return false;
  const ObjectPtr target =
      caches->targets->store().get(shard_set.ns, shard_set.spec.target_ref.name);
  if (!target) return false;
  const Json& annotations = field(*target, "metadata", "annotations");
  if (annotations.is_object() && annotations.contains(planner::kClaimedByAnnotation)) return false;
  return caches->shards->store()
      .byIndex(kDetachedIndex, k8s::objectKey(shard_set.ns, shard_set.name))
      .empty();
}

void ShardSetController::enqueueUnlessEcho(const std::string& key, const std::string& echo_of) {
  if (key != echo_of) enqueue(key);
}

void ShardSetController::enqueueForTarget(const std::string& ns, planner::TargetKind kind,
                                          const std::string& target_name,
                                          const std::string& echo_of) {
  const std::string value = targetIndexValue(ns, planner::toString(kind), target_name);
  for (const auto& i : shard_set_informers_) {
    for (const ObjectPtr& ss : i.informer->store().byIndex(kTargetIndex, value)) {
      enqueueUnlessEcho(k8s::objectKey(*ss), echo_of);
    }
  }
}

void ShardSetController::enqueueForStatefulSet(const Json& sts, const std::string& echo_of) {
  const std::string ns = stringAt(sts, "metadata", "namespace");
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object()) return;
  if (auto s = labels.find(planner::kShardSetLabel); s != labels.end() && s->is_string()) {
    enqueueUnlessEcho(k8s::objectKey(ns, s->get<std::string>()), echo_of);
  }
  if (auto n = labels.find(planner::kOperatorNameLabel); n != labels.end() && n->is_string()) {
    auto mode = labels.find(planner::kOperatorModeLabel);
    auto kind = mode != labels.end() && mode->is_string() ? kindOfMode(mode->get<std::string>())
                                                          : std::nullopt;
    for (auto k : {planner::TargetKind::Prometheus, planner::TargetKind::PrometheusAgent}) {
      if (!kind || *kind == k) enqueueForTarget(ns, k, n->get<std::string>(), echo_of);
    }
  }
}

void ShardSetController::degraded(std::string_view reason) {
  if (metrics_ != nullptr) metrics_->incDegraded(reason);
}

}  // namespace shardscaler::controller
