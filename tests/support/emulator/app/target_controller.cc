#include "target_controller.h"

#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "metadata_merge.h"
#include "statefulset_builder.h"
#include "sync_step.h"

namespace shardscaler::emulator {

namespace {

const Json& metadataOf(const Json& object) { return objectField(object, "metadata"); }

// hasStateChanged: generation, labels or annotations differ.
bool stateChanged(const Json& old_object, const Json& new_object) {
  const Json& a = metadataOf(old_object);
  const Json& b = metadataOf(new_object);
  return a.value("generation", Json()) != b.value("generation", Json()) ||
         a.value("labels", Json()) != b.value("labels", Json()) ||
         a.value("annotations", Json()) != b.value("annotations", Json());
}

}  // namespace

TargetController::TargetController(const TargetKind& kind, k8s::KubeClient& client,
                                   const k8s::Clock& clock, ActionLog& log,
                                   TargetControllerOptions options)
    : kind_(kind),
      client_(client),
      clock_(clock),
      options_(std::move(options)),
      log_(log),
      recorder_(log, kind.kind),
      assets_(kind, client, recorder_),
      caches_(kind, client, clock, options_.namespaces, options_.lag),
      reconciles_(clock, [this](const std::string& key) { return reconcileTarget(key); },
                  {.workers = options_.workers}),
      statuses_(clock, [this](const std::string& key) { return reconcileStatus(key); }),
      // Each kind draws its own sequence, so adding agents does not change the servers' holds.
      rng_(options_.seed + std::hash<std::string>{}(kind.kind)) {}

TargetController::~TargetController() { stop(); }

void TargetController::startInformers() { caches_.start(); }

bool TargetController::hasSynced() const { return caches_.hasSynced(); }

void TargetController::run() {
  {
    std::lock_guard lock(stop_mutex_);
    if (running_ || stopping_) return;
    running_ = true;
  }
  caches_.addTargetHandlers(k8s::EventHandlers{
      .on_add = [this](const k8s::ObjectPtr& o) { onTargetAdd(o); },
      .on_update = [this](const k8s::ObjectPtr& a,
                          const k8s::ObjectPtr& b) { onTargetUpdate(a, b); },
      .on_delete = [this](const k8s::ObjectPtr& o) { onTargetAdd(o); },
  });
  caches_.addStatefulSetHandlers(k8s::EventHandlers{
      .on_add = [this](const k8s::ObjectPtr& o) { onStatefulSetAdd(o); },
      .on_update = [this](const k8s::ObjectPtr& a,
                          const k8s::ObjectPtr& b) { onStatefulSetUpdate(a, b); },
      .on_delete = [this](const k8s::ObjectPtr& o) { onStatefulSetDelete(o); },
  });
  std::lock_guard lock(stop_mutex_);
  reconciles_.start();
  statuses_.start();
  if (options_.resync_period.count() > 0) {
    threads_.emplace_back([this] { periodicLoop(options_.resync_period, false); });
  }
  if (options_.status_poll_period.count() > 0) {
    threads_.emplace_back([this] { periodicLoop(options_.status_poll_period, true); });
  }
}

void TargetController::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  // Both queues stop handing out keys before either loop is joined, as before the runtime.
  reconciles_.drain(std::chrono::nanoseconds(0));
  statuses_.drain(std::chrono::nanoseconds(0));
  reconciles_.shutDown(std::chrono::nanoseconds(0));
  statuses_.shutDown(std::chrono::nanoseconds(0));
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  caches_.stop();
}

// ---- event handlers -------------------------------------------------------------------------

void TargetController::onTargetAdd(const k8s::ObjectPtr& object) {
  if (!managedByController(*object, options_.controller_id)) return;
  reconciles_.enqueue(k8s::objectKey(*object));
}

void TargetController::onTargetUpdate(const k8s::ObjectPtr& old_object,
                                      const k8s::ObjectPtr& new_object) {
  if (!managedByController(*new_object, options_.controller_id)) return;
  if (deletionInProgress(*new_object)) return;
  if (!stateChanged(*old_object, *new_object)) return;  // status writes and resyncs
  reconciles_.enqueue(k8s::objectKey(*new_object));
}

void TargetController::onStatefulSetAdd(const k8s::ObjectPtr& object) {
  if (auto key = ownerKey(*object)) reconciles_.enqueue(*key);
}

void TargetController::onStatefulSetUpdate(const k8s::ObjectPtr& old_object,
                                           const k8s::ObjectPtr& new_object) {
  if (deletionInProgress(*new_object)) return;
  if (k8s::resourceVersionOf(*old_object) == k8s::resourceVersionOf(*new_object)) return;
  auto key = ownerKey(*new_object);
  if (!key) return;
  if (!stateChanged(*old_object, *new_object)) {
    statuses_.enqueue(*key);
    return;
  }
  reconciles_.enqueue(*key);
}

void TargetController::onStatefulSetDelete(const k8s::ObjectPtr& object) {
  if (auto key = ownerKey(*object)) reconciles_.enqueue(*key);
}

std::optional<TargetController::Key> TargetController::ownerKey(const Json& statefulset) const {
  const Json refs = metadataOf(statefulset).value("ownerReferences", Json::array());
  for (const auto& ref : refs) {
    if (!ref.value("controller", false) || ref.value("kind", "") != kind_.kind) continue;
    auto owner = caches_.target(namespaceOf(statefulset), ref.value("name", ""));
    if (!owner || !managedByController(*owner, options_.controller_id)) return std::nullopt;
    return k8s::objectKey(*owner);
  }
  return std::nullopt;
}

// ---- workers --------------------------------------------------------------------------------

k8s::ReconcileOutcome TargetController::reconcileTarget(const Key& key) {
  auto result = sync(key);
  statuses_.enqueue(key);  // processNextReconcileItem: every sync is followed by a status
  bool retaining = false;
  {
    std::lock_guard lock(retained_mutex_);
    retaining = retaining_.contains(key);
  }
  if (result && retaining) {
    return k8s::ReconcileOutcome{.requeue_after = options_.retention_poll};
  }
  if (result) return k8s::ReconcileOutcome::success();
  spdlog::warn("event=sync_failed kind={} key={} error=\"{}\" action=requeue_with_backoff",
               kind_.kind, key, result.error().message);
  return k8s::ReconcileOutcome::failure(result.error().message);
}

k8s::ReconcileOutcome TargetController::reconcileStatus(const Key& key) {
  auto result = updateStatus(key);
  if (result) return k8s::ReconcileOutcome::success();
  spdlog::warn("event=status_failed kind={} key={} error=\"{}\" action=requeue_with_backoff",
               kind_.kind, key, result.error().message);
  return k8s::ReconcileOutcome::failure(result.error().message);
}

void TargetController::periodicLoop(std::chrono::milliseconds period, bool status_only) {
  std::unique_lock lock(stop_mutex_);
  while (!stopping_) {
    if (clock_.waitUntil(lock, stop_cv_, clock_.deadlineAfter(period),
                         [this] { return stopping_; })) {
      return;
    }
    lock.unlock();
    for (const auto& target : caches_.targets()) {
      if (!managedByController(*target, options_.controller_id)) continue;
      const std::string key = k8s::objectKey(*target);
      if (!status_only) {
        reconciles_.enqueue(key);
        continue;
      }
      // StatusPoller: refresh what is not fully available yet.
      const Json status = objectField(*target, "status");
      const long long expected =
          static_cast<long long>(replicasNumber(*target)) * shardsNumber(*target);
      bool available = status.value("availableReplicas", -1LL) == expected &&
                       status.value("updatedReplicas", -1LL) == expected;
      for (const auto& c : status.value("conditions", Json::array())) {
        if (c.value("type", "") == "Available" && c.value("status", "") != "True") {
          available = false;
        }
      }
      if (!available) statuses_.enqueue(key);
    }
    lock.lock();
  }
}

// ---- sync -----------------------------------------------------------------------------------

bool TargetController::holdSync(const Key& key) {
  if (options_.sync_latency.count() == 0 && options_.sync_latency_jitter.count() == 0) return true;
  auto hold = options_.sync_latency;
  if (options_.sync_latency_jitter.count() > 0) {
    std::lock_guard lock(rng_mutex_);
    std::uniform_int_distribution<std::chrono::milliseconds::rep> jitter(
        0, options_.sync_latency_jitter.count());
    hold += std::chrono::milliseconds(jitter(rng_));
  }
  spdlog::debug("event=sync_hold kind={} key={} hold_ms={}", kind_.kind, key, hold.count());
  std::unique_lock lock(stop_mutex_);
  return !clock_.waitUntil(lock, stop_cv_, clock_.deadlineAfter(hold),
                           [this] { return stopping_; });
}

k8s::Result<void> TargetController::sync(const Key& key) {
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  Action record{.verb = "sync", .kind = kind_.kind, .ns = ns, .name = name};
  auto finish = [&](std::string outcome) {
    record.outcome = std::move(outcome);
    log_.record(record);
  };

  auto object = caches_.target(ns, name);
  if (!object) {
    std::lock_guard lock(outcomes_mutex_);
    outcomes_.erase(key);  // dependents go with the owner (garbage collector)
    finish("not-found");
    return {};
  }
  const Json& target = *object;
  record.generation = metadataOf(target).value("generation", 0LL);
  if (deletionInProgress(target)) {
    std::lock_guard lock(outcomes_mutex_);
    outcomes_.erase(key);
    finish("deleting");
    return {};
  }
  if (objectField(target, "spec").value("paused", false)) {
    spdlog::info(
        "event=sync kind={} key={} result=paused msg=\"no action taken (the resource "
        "is paused)\"",
        kind_.kind, key);
    {
      std::lock_guard lock(outcomes_mutex_);
      outcomes_[key] = ReconcileOutcome{.ok = true};
    }
    finish("paused");
    return {};
  }
  spdlog::info("event=sync kind={} key={} generation={} shards={}", kind_.kind, key,
               *record.generation, shardsNumber(target));
  // A busy operator: what it read above is what it acts on below, however long that takes.
  // The StatefulSets, though, are read from the cache when each step runs, as the operator's
  // shard loop and its cleanup (ListAllByNamespace) do.
  if (!holdSync(key)) {
    finish("error: stopped during --sync-latency hold");
    return k8s::makeError(k8s::ErrorKind::Cancelled, "stopped during the sync latency hold");
  }

  auto result = assets_.syncConfigSecret(target);
  if (result) result = assets_.syncGoverningService(target);
  if (result) result = syncStatefulSets(target);
  if (result) result = deleteExcessStatefulSets(target);
  {
    std::lock_guard lock(outcomes_mutex_);
    outcomes_[key] = result ? ReconcileOutcome{.ok = true}
                            : ReconcileOutcome{.ok = false, .message = result.error().message};
  }
  finish(result ? "ok" : "error: " + result.error().message);
  return result;
}

k8s::Result<void> TargetController::syncStatefulSets(const Json& target) {
  const std::string ns = namespaceOf(target);
  const auto expected = expectedStatefulSetNames(kind_, target);
  for (int shard = 0; shard < static_cast<int>(expected.size()); ++shard) {
    auto existing = caches_.statefulSet(ns, expected[shard]);
    if (existing && deletionInProgress(*existing)) continue;  // no update/delete hot loop
    const Json existing_spec = existing ? existing->value("spec", Json()) : Json();
    const std::string hash = statefulSetInputHash(target, existing_spec);
    Json desired = makeStatefulSet(kind_, target, shard, hash);
    if (!existing) {
      if (auto r = createStatefulSetOrPatchLabels(target, shard, desired); !r) {
        return failedStep("failed to create statefulset", r.error());
      }
      continue;
    }
    if (stringMap(*existing, "annotations")[kInputHashAnnotation] == hash) continue;
    if (auto r = forceUpdateStatefulSet(target, shard, desired); !r) return r;
  }
  return {};
}

k8s::Result<void> TargetController::createStatefulSetOrPatchLabels(const Json& target, int shard,
                                                                   const Json& desired) {
  const std::string ns = namespaceOf(target);
  const std::string name = nameOf(desired);
  auto created = client_.create(k8s::resources::statefulSets(), ns, desired);
  recorder_.record("create", "StatefulSet", target, name, shard, "expected shard not in cache",
                   created);
  if (created) return {};
  if (!created.error().is(k8s::ErrorKind::AlreadyExists)) {
    return std::unexpected(created.error());
  }
  // The object exists but the informer does not see it (a selector label is missing): put
  // the desired labels back with a strategic merge patch; nothing else changes.
  Json patch{{"metadata", {{"labels", desired["metadata"]["labels"]}}}};
  auto patched = client_.patch(k8s::resources::statefulSets(), ns, name,
                               k8s::PatchType::StrategicMerge, patch);
  recorder_.record("patch", "StatefulSet", target, name, shard,
                   "create returned AlreadyExists: labels patched back", patched);
  if (!patched) return std::unexpected(patched.error());
  return {};
}

k8s::Result<void> TargetController::forceUpdateStatefulSet(const Json& target, int shard,
                                                           const Json& desired) {
  const std::string ns = namespaceOf(target);
  const std::string name = nameOf(desired);
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto existing = client_.get(k8s::resources::statefulSets(), ns, name);
    if (!existing) return failedStep("failed to update StatefulSet", existing.error());
    Json update = desired;
    mergeMetadata(update, *existing);
    copyKubectlTemplateAnnotations(update, *existing);
    auto updated = client_.update(k8s::resources::statefulSets(), ns, update);
    recorder_.record("update", "StatefulSet", target, name, shard, "input hash changed", updated);
    if (updated) return {};
    if (updated.error().is(k8s::ErrorKind::Conflict)) continue;
    if (!updated.error().is(k8s::ErrorKind::Invalid)) {
      return failedStep("failed to update StatefulSet", updated.error());
    }
    // Immutable fields changed: delete (foreground) and let the next sync recreate it.
    spdlog::info("event=recreate_statefulset kind={} statefulset={}/{} reason=\"{}\"", kind_.kind,
                 ns, name, updated.error().message);
    k8s::DeleteOptions options;
    options.propagation_policy = "Foreground";
    auto deleted = client_.remove(k8s::resources::statefulSets(), ns, name, options);
    recorder_.record("delete", "StatefulSet", target, name, shard,
                     "update rejected as invalid: " + updated.error().message, deleted);
    if (!deleted) return std::unexpected(deleted.error());
    return {};
  }
  return k8s::makeError(k8s::ErrorKind::Conflict,
                        "failed to update StatefulSet " + name + ": conflicts");
}

k8s::Result<void> TargetController::deleteExcessStatefulSets(const Json& target) {
  const std::string ns = namespaceOf(target);
  const auto expected_list = expectedStatefulSetNames(kind_, target);
  const std::set<std::string> expected(expected_list.begin(), expected_list.end());
  const Labels selector = cleanupSelector(kind_, nameOf(target));
  std::string errors;
  bool retaining = false;
  for (const auto& object : caches_.statefulSets(ns)) {
    if (!matchesLabels(*object, selector)) continue;
    const std::string name = nameOf(*object);
    if (expected.contains(name) || deletionInProgress(*object)) continue;
    if (retainExcessShard(target, *object, retaining)) continue;
    k8s::DeleteOptions options;
    options.propagation_policy = "Foreground";
    auto deleted = client_.remove(k8s::resources::statefulSets(), ns, name, options);
    recorder_.record("delete", "StatefulSet", target, name,
                     shardOfStatefulSetName(kind_, nameOf(target), name),
                     "not expected for " + std::to_string(expected.size()) + " shard(s)", deleted);
    if (!deleted && !deleted.error().is(k8s::ErrorKind::NotFound)) {
      errors += (errors.empty() ? "" : "; ") + std::string("failed to delete StatefulSet ") + name +
                ": " + deleted.error().describe();
    }
  }
  {
    std::lock_guard lock(retained_mutex_);
    const Key key = ns + "/" + nameOf(target);
    if (retaining) {
      retaining_.insert(key);
    } else {
      retaining_.erase(key);
    }
  }
  if (!errors.empty()) {
    return k8s::makeError(k8s::ErrorKind::Other,
                          "failed to clean up excess StatefulSets: " + errors);
  }
  return {};
}

bool TargetController::retainExcessShard(const Json& target, const Json& statefulset, bool& kept) {
  if (!options_.shard_retention || !kind_.server) return false;
  const Json spec = objectField(target, "spec");
  const Json policy = spec.value("shardRetentionPolicy", Json::object());
  if (!policy.is_object() || policy.value("whenScaled", "") != "Retain") return false;
  const std::string ns = namespaceOf(target);
  const std::string name = nameOf(statefulset);
  const int shard = shardOfStatefulSetName(kind_, nameOf(target), name).value_or(-1);
  const auto annotations = stringMap(statefulset, "annotations");
  const auto now = clock_.now();
  const auto existing = annotations.find(std::string(kDeletionDeadlineAnnotation));
  if (existing == annotations.end()) {
    const std::string deadline = retentionDeadline(target, now);
    Json patch{
        {"metadata", {{"annotations", {{std::string(kDeletionDeadlineAnnotation), deadline}}}}}};
    auto patched = client_.patch(k8s::resources::statefulSets(), ns, name,
                                 k8s::PatchType::StrategicMerge, patch);
    recorder_.record("patch", "StatefulSet", target, name, shard,
                     "retained until " + deadline + " (shardRetentionPolicy Retain)", patched);
    kept = true;
    return true;
  }
  auto deadline = parseDeadline(existing->second);
  if (!deadline) {
    spdlog::warn("event=retention_deadline_unreadable statefulset={}/{} value=\"{}\"", ns, name,
                 existing->second);
    return true;  // never deleted on a garbage deadline
  }
  if (*deadline == std::chrono::system_clock::time_point{}) return true;  // never
  if (now < *deadline) {
    kept = true;
    return true;
  }
  return false;
}

// ---- status ---------------------------------------------------------------------------------

k8s::Result<void> TargetController::updateStatus(const Key& key) {
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  auto object = caches_.target(ns, name);
  if (!object || deletionInProgress(*object)) return {};
  const Json& target = *object;

  std::vector<ShardObservation> shards;
  const auto expected = expectedStatefulSetNames(kind_, target);
  for (int shard = 0; shard < static_cast<int>(expected.size()); ++shard) {
    ShardObservation observation{.shard = shard, .statefulset_name = expected[shard]};
    if (auto sts = caches_.statefulSet(ns, expected[shard])) {
      observation.statefulset = *sts;
      Labels match;
      const Json match_labels = objectField(*sts, "spec")
                                    .value("selector", Json::object())
                                    .value("matchLabels", Json::object());
      for (const auto& [k, v] : match_labels.items()) {
        if (v.is_string()) match[k] = v.get<std::string>();
      }
      k8s::ListOptions list_options;
      list_options.label_selector = selectorString(match);
      auto pods = k8s::listAll(client_, k8s::resources::pods(), ns, list_options);
      if (!pods) return failedStep("failed to retrieve statefulset state", pods.error());
      for (const auto& pod : pods->value("items", Json::array())) {
        for (const auto& ref : metadataOf(pod).value("ownerReferences", Json::array())) {
          if (ref.value("kind", "") == "StatefulSet" && ref.value("name", "") == expected[shard]) {
            observation.pods.push_back(pod);
            break;
          }
        }
      }
    }
    shards.push_back(std::move(observation));
  }
  std::optional<ReconcileOutcome> outcome;
  {
    std::lock_guard lock(outcomes_mutex_);
    if (auto it = outcomes_.find(key); it != outcomes_.end()) outcome = it->second;
  }
  const Json patch = buildStatusPatch(kind_, target, shards, outcome, clock_.now());
  auto patched = client_.patch(kind_.resource, ns, name, k8s::PatchType::Merge, patch, "status");
  recorder_.record("patch", kind_.kind, target, name, std::nullopt, "status", patched, "status");
  if (!patched) return failedStep("failed to update status", patched.error());
  return {};
}

}  // namespace shardscaler::emulator
