#include "shardscaler/scaler/shardset_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "shardscaler/retention/shard_set.h"
#include "shardscaler/retention/stateful_set.h"
#include "shardscaler/retention/target.h"
#include "shardscaler/scaler/api_resources.h"
#include "shardscaler/scaler/ingestion_source.h"
#include "shardscaler/scaler/shard_set_status.h"

namespace shardscaler::scaler {
namespace {

using k8s::Json;
using k8s::ObjectPtr;

constexpr std::string_view kQueueName = "shardset";
// Held on every ShardSet so that its deletion cannot leave a target paused by shardscaler.
constexpr const char* kReleaseFinalizer = "shardscaler.io/release-target";

const Json& field(const Json& object, std::string_view a, std::string_view b) {
  static const Json null;
  auto outer = object.find(a);
  if (outer == object.end() || !outer->is_object()) return null;
  auto inner = outer->find(b);
  return inner == outer->end() ? null : *inner;
}

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

std::string stringAt(const Json& object, std::string_view a, std::string_view b) {
  const Json& v = field(object, a, b);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// Only metadata (without managedFields) is needed to map a target or StatefulSet event to its
// ShardSets; reconcile reads the objects themselves from the API server.
void keepMetadataOnly(Json& object) {
  Json kept = Json::object();
  if (auto m = object.find("metadata"); m != object.end()) kept["metadata"] = std::move(*m);
  object = std::move(kept);
  k8s::dropManagedFields(object);
}

std::optional<retention::TargetKind> kindOfMode(std::string_view mode) {
  if (mode == "server") return retention::TargetKind::Prometheus;
  if (mode == "agent") return retention::TargetKind::PrometheusAgent;
  return std::nullopt;
}

InvolvedObject involvedObject(const Json& shard_set) {
  return InvolvedObject{
      .api_version = std::string(kShardSetApiVersion),
      .kind = std::string(kShardSetKind),
      .ns = stringAt(shard_set, "metadata", "namespace"),
      .name = stringAt(shard_set, "metadata", "name"),
      .uid = stringAt(shard_set, "metadata", "uid"),
      .resource_version = stringAt(shard_set, "metadata", "resourceVersion"),
  };
}

}  // namespace

struct ShardSetController::Observed {
  std::optional<retention::Target> target;
  std::vector<retention::ObservedStatefulSet> stateful_sets;
};

class ShardSetController::QueueMetrics final : public k8s::WorkQueueObserver {
 public:
  explicit QueueMetrics(Metrics* metrics) : metrics_(metrics) {}
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
  Metrics* metrics_;
};

ShardSetController::ShardSetController(k8s::KubeClient& client, const k8s::Clock& clock,
                                       EventRecorder& events, Metrics* metrics,
                                       ControllerOptions options, IngestionSource* ingestion)
    : client_(client),
      clock_(clock),
      events_(events),
      metrics_(metrics),
      options_(std::move(options)),
      ingestion_(ingestion),
      applier_(client, events),
      queue_metrics_(std::make_unique<QueueMetrics>(metrics)),
      queue_(clock, nullptr, queue_metrics_.get()) {
  if (options_.namespaces.empty()) options_.namespaces.emplace_back();
}

ShardSetController::~ShardSetController() { stop(std::chrono::seconds(0)); }

void ShardSetController::addInformer(const k8s::Resource& resource, const std::string& ns,
                                     const std::string& label_selector, void (*transform)(Json&),
                                     k8s::EventHandlers handlers,
                                     std::vector<NamedInformer>& into) {
  k8s::InformerOptions opts;
  opts.ns = ns;
  opts.label_selector = label_selector;
  opts.resync_period = options_.resync_period;
  opts.transform = transform;
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
  for (const std::string& ns : options_.namespaces) {
    addInformer(shardSets(), ns, "", k8s::dropManagedFields, shardSetHandlers(),
                shard_set_informers_);
    addInformer(prometheuses(), ns, "", keepMetadataOnly,
                targetHandlers(retention::TargetKind::Prometheus), other_informers_);
    addInformer(prometheusAgents(), ns, "", keepMetadataOnly,
                targetHandlers(retention::TargetKind::PrometheusAgent), other_informers_);
    // Attached and retained shards both keep the shard label; only the name label moves.
    addInformer(k8s::resources::statefulSets(), ns, std::string(retention::kOperatorShardLabel),
                keepMetadataOnly, statefulSetHandlers(), other_informers_);
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

void ShardSetController::startWorkers() {
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { worker(); });
}

bool ShardSetController::stop(std::chrono::nanoseconds drain_timeout) {
  bool drained = queue_.shutDownWithDrain(drain_timeout);
  for (auto& w : workers_) {
    if (w.joinable()) w.join();
  }
  workers_.clear();
  for (auto* list : {&shard_set_informers_, &other_informers_}) {
    for (auto& i : *list) i.informer->requestStop();  // all at once: each watch takes ~1 s
  }
  for (auto* list : {&shard_set_informers_, &other_informers_}) {
    for (auto& i : *list) i.informer->stop();
  }
  return drained;
}

void ShardSetController::enqueue(const std::string& key) { queue_.add(key); }

k8s::EventHandlers ShardSetController::shardSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { queue_.add(k8s::objectKey(*o)); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            if (worthReconciling(old_object, new_object)) queue_.add(k8s::objectKey(*new_object));
          },
      .on_delete = [this](const ObjectPtr& o) { queue_.add(k8s::objectKey(*o)); },
  };
}

k8s::EventHandlers ShardSetController::targetHandlers(retention::TargetKind kind) {
  auto on_change = [this, kind](const ObjectPtr& o) {
    enqueueForTarget(stringAt(*o, "metadata", "namespace"), kind, stringAt(*o, "metadata", "name"));
  };
  return k8s::EventHandlers{
      .on_add = on_change,
      .on_update =
          [on_change](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            if (worthReconciling(old_object, new_object)) on_change(new_object);
          },
      .on_delete = on_change,
  };
}

k8s::EventHandlers ShardSetController::statefulSetHandlers() {
  return k8s::EventHandlers{
      .on_add = [this](const ObjectPtr& o) { enqueueForStatefulSet(*o); },
      .on_update =
          [this](const ObjectPtr& old_object, const ObjectPtr& new_object) {
            if (worthReconciling(old_object, new_object)) {
              // A detach or re-attach moves the StatefulSet between owners' label sets: tell
              // both the old and the new one.
              enqueueForStatefulSet(*old_object);
              enqueueForStatefulSet(*new_object);
            }
          },
      .on_delete = [this](const ObjectPtr& o) { enqueueForStatefulSet(*o); },
  };
}

void ShardSetController::enqueueForTarget(const std::string& ns, retention::TargetKind kind,
                                          const std::string& target_name) {
  const std::string_view kind_name = retention::toString(kind);
  for (const auto& i : shard_set_informers_) {
    for (const ObjectPtr& ss : i.informer->store().listNamespace(ns)) {
      const Json& ref = field(*ss, "spec", "targetRef");
      if (ref.is_object() && ref.value("kind", "") == kind_name &&
          ref.value("name", "") == target_name) {
        queue_.add(k8s::objectKey(*ss));
      }
    }
  }
}

void ShardSetController::enqueueForStatefulSet(const Json& sts) {
  const std::string ns = stringAt(sts, "metadata", "namespace");
  const Json& labels = field(sts, "metadata", "labels");
  if (!labels.is_object()) return;
  if (auto s = labels.find(retention::kShardSetLabel); s != labels.end() && s->is_string()) {
    queue_.add(k8s::objectKey(ns, s->get<std::string>()));
  }
  if (auto n = labels.find(retention::kOperatorNameLabel); n != labels.end() && n->is_string()) {
    auto mode = labels.find(retention::kOperatorModeLabel);
    auto kind = mode != labels.end() && mode->is_string() ? kindOfMode(mode->get<std::string>())
                                                          : std::nullopt;
    for (auto k : {retention::TargetKind::Prometheus, retention::TargetKind::PrometheusAgent}) {
      if (!kind || *kind == k) enqueueForTarget(ns, k, n->get<std::string>());
    }
  }
}

k8s::Result<ShardSetController::Observed> ShardSetController::observe(
    const retention::ShardSet& shard_set) const {
  Observed observed;
  auto kind = retention::parseTargetKind(shard_set.target_kind);
  if (!kind || shard_set.target_name.empty()) return observed;  // the planner says why

  auto target = client_.get(targetResource(*kind), shard_set.ns, shard_set.target_name);
  if (!target) {
    if (!target.error().is(k8s::ErrorKind::NotFound)) return std::unexpected(target.error());
  } else {
    auto parsed = retention::parseTarget(*target, *kind);
    if (!parsed) {
      return k8s::makeError(k8s::ErrorKind::Decode, std::string(retention::toString(*kind)) + " " +
                                                        shard_set.ns + "/" + shard_set.target_name +
                                                        ": " + parsed.error().describe());
    }
    observed.target = std::move(*parsed);
  }

  k8s::ListOptions opts{.label_selector = std::string(retention::kOperatorShardLabel)};
  auto list = k8s::listAll(client_, k8s::resources::statefulSets(), shard_set.ns, opts);
  if (!list) return std::unexpected(list.error());
  for (const Json& item : (*list)["items"]) {
    auto sts = retention::parseStatefulSet(item);
    if (!sts) {
      spdlog::warn("ignoring malformed StatefulSet in {}: {}", shard_set.ns,
                   sts.error().describe());
      continue;
    }
    observed.stateful_sets.push_back(std::move(*sts));
  }
  return observed;
}

ReconcileOutcome ShardSetController::reconcile(const std::string& key) {
  const uint64_t id = next_reconcile_id_++;
  ObjectPtr object;
  for (const auto& i : shard_set_informers_) {
    object = i.informer->store().get(key);
    if (object) break;
  }
  if (!object) {
    // Deleted: forget everything about it. Its retained StatefulSets keep their deadlines
    // and owner references; nothing is deleted on its behalf.
    auto slash = key.find('/');
    if (metrics_ != nullptr && slash != std::string::npos) {
      metrics_->removeShardSet(key.substr(0, slash), key.substr(slash + 1));
    }
    if (ingestion_ != nullptr) ingestion_->untrack(key);
    spdlog::debug("reconcile key={} reconcile_id={}: ShardSet gone", key, id);
    return {};
  }
  return reconcileShardSet(*object, id);
}

ShardSetController::Rounds ShardSetController::planAndApply(
    const retention::ShardSet& shard_set, const InvolvedObject& subject, uint64_t id,
    const std::function<void(retention::ShardSet&, const Observed&)>& adjust) {
  const std::string key = k8s::objectKey(shard_set.ns, shard_set.name);
  Rounds rounds;
  for (int round = 0;; ++round) {
    auto observed = observe(shard_set);
    if (!observed) {
      spdlog::error("reconcile key={} reconcile_id={}: reading the target failed: {}", key, id,
                    observed.error().describe());
      degraded("observe_failed");
      rounds.early = {.result = ReconcileResult::Error, .error = observed.error().describe()};
      return rounds;
    }
    retention::ShardSet planned = shard_set;
    if (adjust) adjust(planned, *observed);
    rounds.zones = observed->target ? observed->target->topologyZones() : std::nullopt;
    rounds.plan = retention::planShardSet(retention::PlanInput{
        .shard_set = std::move(planned),
        .target = std::move(observed->target),
        .stateful_sets = std::move(observed->stateful_sets),
        .now = clock_.now(),
    });
    const retention::Plan& plan = rounds.plan;
    if (plan.actions.empty()) return rounds;
    if (round == options_.max_rounds) {
      spdlog::warn("reconcile key={} reconcile_id={}: still {} action(s) after {} rounds", key, id,
                   plan.actions.size(), round);
      rounds.early = {.result = ReconcileResult::Requeue};
      return rounds;
    }
    auto kind = retention::parseTargetKind(shard_set.target_kind);
    ApplyOutcome outcome = applier_.apply(plan, targetResource(*kind), shard_set.ns, subject);
    if (!outcome.error) continue;
    if (outcome.needsReplan()) {
      spdlog::info("reconcile key={} reconcile_id={}: {} ({}), planning again", key, id,
                   outcome.failed_action, outcome.error->describe());
      continue;
    }
    spdlog::error("reconcile key={} reconcile_id={}: {} failed: {}", key, id, outcome.failed_action,
                  outcome.error->describe());
    degraded("apply_failed");
    rounds.failure = std::move(outcome);
    return rounds;
  }
}

k8s::Result<void> ShardSetController::ensureFinalizer(const Json& object) {
  const Json& finalizers = object["metadata"].value("finalizers", Json::array());
  if (std::ranges::find(finalizers, Json(kReleaseFinalizer)) != finalizers.end()) return {};
  // The resourceVersion test keeps a concurrent change of the list from being overwritten.
  Json patch = Json::array({{{"op", "test"},
                             {"path", "/metadata/resourceVersion"},
                             {"value", object["metadata"]["resourceVersion"]}},
                            finalizers.empty() ? Json{{"op", "add"},
                                                      {"path", "/metadata/finalizers"},
                                                      {"value", Json::array({kReleaseFinalizer})}}
                                               : Json{{"op", "add"},
                                                      {"path", "/metadata/finalizers/-"},
                                                      {"value", kReleaseFinalizer}}});
  auto r = client_.patch(shardSets(), stringAt(object, "metadata", "namespace"),
                         stringAt(object, "metadata", "name"), k8s::PatchType::Json, patch);
  if (!r) return std::unexpected(r.error());
  return {};
}

// A ShardSet being deleted lets go of its target: whatever an interrupted transition left is
// undone (detached shards below the target's count re-attached, a target it paused resumed),
// with the target's own shard count kept. Retained StatefulSets stay as they are; without their
// ShardSet nobody deletes them at their deadline, so an Event names them.
ReconcileOutcome ShardSetController::releaseTarget(const Json& object,
                                                   const retention::ShardSet& shard_set,
                                                   const InvolvedObject& subject, uint64_t id) {
  const std::string key = k8s::objectKey(object);
  const Json& finalizers = object["metadata"].value("finalizers", Json::array());
  auto mine = std::ranges::find(finalizers, Json(kReleaseFinalizer));
  if (mine == finalizers.end()) return {};  // released already; the API server deletes it

  Rounds rounds = planAndApply(shard_set, subject, id,
                               [](retention::ShardSet& planned, const Observed& observed) {
                                 // Keep what the target has: no scaling while letting go.
                                 if (observed.target)
                                   planned.shards = observed.target->effectiveShards();
                                 planned.min_shards.reset();
                                 planned.max_shards.reset();
                               });
  if (rounds.early) return *rounds.early;
  if (rounds.failure.error) {
    return {.result = ReconcileResult::Error, .error = rounds.failure.error->describe()};
  }
  if (!rounds.plan.status.retained_shards.empty()) {
    std::string names;
    for (const auto& r : rounds.plan.status.retained_shards) {
      names += (names.empty() ? "" : ", ") + r.stateful_set;
    }
    events_.record(subject, retention::EventType::Warning, "RetainedShardsOrphaned",
                   "ShardSet deleted; its retained StatefulSets stay and will not be deleted at "
                   "their deadline: " +
                       names +
                       " (kubectl delete statefulset -l "
                       "shardscaler.io/shardset=" +
                       shard_set.name + " removes them)");
  }
  Json patch = Json::array(
      {{{"op", "test"},
        {"path", "/metadata/resourceVersion"},
        {"value", object["metadata"]["resourceVersion"]}},
       {{"op", "remove"},
        {"path", "/metadata/finalizers/" + std::to_string(mine - finalizers.begin())}}});
  auto r = client_.patch(shardSets(), shard_set.ns, shard_set.name, k8s::PatchType::Json, patch);
  if (!r && !r.error().is(k8s::ErrorKind::NotFound)) {
    spdlog::warn("reconcile key={} reconcile_id={}: removing finalizer failed: {}", key, id,
                 r.error().describe());
    return {.result = ReconcileResult::Error, .error = r.error().describe()};
  }
  spdlog::info("reconcile key={} reconcile_id={}: ShardSet deleted, target released", key, id);
  return {};
}

ReconcileOutcome ShardSetController::reconcileShardSet(const Json& object, uint64_t id) {
  const std::string key = k8s::objectKey(object);
  auto shard_set = retention::parseShardSet(object);
  if (!shard_set) {
    spdlog::error("reconcile key={} reconcile_id={}: not a ShardSet: {}", key, id,
                  shard_set.error().describe());
    degraded("malformed_shardset");
    return {};  // terminal: waiting does not make it a ShardSet
  }
  const InvolvedObject subject = involvedObject(object);
  if (object["metadata"].contains("deletionTimestamp")) {
    return releaseTarget(object, *shard_set, subject, id);
  }
  if (auto added = ensureFinalizer(object); !added) {
    spdlog::error("reconcile key={} reconcile_id={}: adding finalizer {} failed: {}", key, id,
                  kReleaseFinalizer, added.error().describe());
    degraded("finalizer_failed");
    return {.result = ReconcileResult::Error, .error = added.error().describe()};
  }

  Rounds rounds = planAndApply(*shard_set, subject, id, nullptr);
  if (rounds.early) return *rounds.early;
  const retention::Plan& plan = rounds.plan;
  const ApplyOutcome& failure = rounds.failure;
  const std::optional<size_t>& zones = rounds.zones;

  for (const retention::Event& event : plan.events) {
    events_.record(subject, event.type, event.reason, event.message);
  }
  std::vector<retention::Event> ingestion_events;
  Json status = shardSetStatusJson(
      plan, object, ingestion_ != nullptr ? ingestion_->snapshot(key) : std::nullopt,
      failure.error
          ? std::optional<std::string>(failure.failed_action + ": " + failure.error->describe())
          : std::nullopt,
      clock_.now(), &ingestion_events);
  for (const retention::Event& event : ingestion_events) {
    events_.record(subject, event.type, event.reason, event.message);
  }
  if (auto written = writeStatus(object, status); !written) {
    spdlog::warn("reconcile key={} reconcile_id={}: status write failed: {}", key, id,
                 written.error().describe());
    degraded("status_write_failed");
    if (!failure.error) {
      return {.result = ReconcileResult::Error, .error = written.error().describe()};
    }
  }
  publishMetrics(*shard_set, plan);
  if (ingestion_ != nullptr) {
    if (auto target = ingestionTarget(object)) {
      target->zones = zones;
      ingestion_->track(key, *target);
    } else {
      ingestion_->untrack(key);
    }
  }
  if (failure.error) return {.result = ReconcileResult::Error, .error = failure.error->describe()};
  ReconcileOutcome done;
  if (plan.requeue_after) done.requeue_after = *plan.requeue_after;
  return done;
}

k8s::Result<void> ShardSetController::writeStatus(const Json& object, const Json& status) {
  auto current = object.find("status");
  if (current != object.end() && *current == status) return {};
  // Replace the whole status: a merge patch could not remove fields that no longer apply.
  Json patch = Json::array({{{"op", "add"}, {"path", "/status"}, {"value", status}}});
  auto r =
      client_.patch(shardSets(), stringAt(object, "metadata", "namespace"),
                    stringAt(object, "metadata", "name"), k8s::PatchType::Json, patch, "status");
  if (!r) return std::unexpected(r.error());
  return {};
}

void ShardSetController::publishMetrics(const retention::ShardSet& shard_set,
                                        const retention::Plan& plan) {
  if (metrics_ == nullptr) return;
  const auto& d = plan.decision;
  const int desired = d.desired ? d.desired->want : static_cast<int>(shard_set.shards.value_or(0));
  metrics_->setShardCounts(shard_set.ns, shard_set.name, desired, plan.status.shards,
                           static_cast<int>(plan.status.retained_shards.size()));
}

k8s::Result<retention::Plan> ShardSetController::dryRun(const std::string& ns,
                                                        const std::string& name,
                                                        std::optional<int32_t> shards) {
  auto object = client_.get(shardSets(), ns, name);
  if (!object) return std::unexpected(object.error());
  auto shard_set = retention::parseShardSet(*object);
  if (!shard_set) {
    return k8s::makeError(k8s::ErrorKind::Decode,
                          ns + "/" + name + ": " + shard_set.error().describe());
  }
  if (shards) shard_set->shards = *shards;
  auto observed = observe(*shard_set);
  if (!observed) return std::unexpected(observed.error());
  return retention::planShardSet(retention::PlanInput{
      .shard_set = std::move(*shard_set),
      .target = std::move(observed->target),
      .stateful_sets = std::move(observed->stateful_sets),
      .now = clock_.now(),
  });
}

void ShardSetController::worker() {
  while (auto key = queue_.get()) {
    const auto started = clock_.monotonicNow();
    ReconcileOutcome outcome = reconcile(*key);
    const double seconds = std::chrono::duration<double>(clock_.monotonicNow() - started).count();
    if (metrics_ != nullptr) metrics_->observeReconcile(outcome.result, seconds);
    switch (outcome.result) {
      case ReconcileResult::Success:
        queue_.forget(*key);
        if (outcome.requeue_after) queue_.addAfter(*key, *outcome.requeue_after);
        break;
      case ReconcileResult::Requeue:
      case ReconcileResult::Error:
        queue_.addRateLimited(*key);
        break;
    }
    queue_.done(*key);
  }
}

void ShardSetController::degraded(std::string_view reason) {
  if (metrics_ != nullptr) metrics_->incDegraded(reason);
}

}  // namespace shardscaler::scaler
