#include "target_controller.h"

#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "metadata_merge.h"
#include "prometheus_config.h"
#include "statefulset_builder.h"

namespace shardscaler::emulator {

namespace {

// retry.DefaultRetry: 5 attempts on 409 Conflict.
constexpr int kConflictRetries = 5;

k8s::Resource services() {
  return k8s::Resource{.group = "", .version = "v1", .resource = "services"};
}

const Json& metadataOf(const Json& object) {
  static const Json empty = Json::object();
  auto meta = object.find("metadata");
  return meta != object.end() && meta->is_object() ? *meta : empty;
}

std::string nameOf(const Json& object) { return metadataOf(object).value("name", ""); }
std::string namespaceOf(const Json& object) { return metadataOf(object).value("namespace", ""); }

// hasStateChanged: generation, labels or annotations differ.
bool stateChanged(const Json& old_object, const Json& new_object) {
  const Json& a = metadataOf(old_object);
  const Json& b = metadataOf(new_object);
  return a.value("generation", Json()) != b.value("generation", Json()) ||
         a.value("labels", Json()) != b.value("labels", Json()) ||
         a.value("annotations", Json()) != b.value("annotations", Json());
}

std::unexpected<k8s::Error> wrap(const std::string& context, const k8s::Error& error) {
  k8s::Error wrapped = error;
  wrapped.message = context + ": " + error.describe();
  return std::unexpected(std::move(wrapped));
}

}  // namespace

TargetController::TargetController(const TargetKind& kind, k8s::KubeClient& client,
                                   const k8s::Clock& clock, ActionLog& log,
                                   ControllerOptions options)
    : kind_(kind),
      client_(client),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
      reconcile_queue_(clock),
      status_queue_(clock) {
  std::vector<std::string> namespaces = options_.namespaces;
  if (namespaces.empty()) namespaces.emplace_back();  // "": all namespaces
  for (const auto& ns : namespaces) {
    k8s::InformerOptions target_options;
    target_options.ns = ns;
    target_options.transform = k8s::dropManagedFields;
    target_informers_.push_back(
        std::make_unique<k8s::Informer>(client_, kind_.resource, target_options, clock_));
    k8s::InformerOptions sts_options;
    sts_options.ns = ns;
    sts_options.label_selector = statefulSetInformerSelector(kind_);
    sts_options.transform = k8s::dropManagedFields;
    statefulset_informers_.push_back(std::make_unique<k8s::Informer>(
        client_, k8s::resources::statefulSets(), sts_options, clock_));
  }
}

TargetController::~TargetController() { stop(); }

void TargetController::startInformers() {
  for (auto& informer : target_informers_) informer->start();
  for (auto& informer : statefulset_informers_) informer->start();
}

bool TargetController::hasSynced() const {
  for (const auto& informer : target_informers_) {
    if (!informer->hasSynced()) return false;
  }
  for (const auto& informer : statefulset_informers_) {
    if (!informer->hasSynced()) return false;
  }
  return true;
}

void TargetController::run() {
  {
    std::lock_guard lock(stop_mutex_);
    if (running_ || stopping_) return;
    running_ = true;
  }
  for (auto& informer : target_informers_) {
    informer->addEventHandlers(k8s::EventHandlers{
        .on_add = [this](const k8s::ObjectPtr& o) { onTargetAdd(o); },
        .on_update = [this](const k8s::ObjectPtr& a,
                            const k8s::ObjectPtr& b) { onTargetUpdate(a, b); },
        .on_delete = [this](const k8s::ObjectPtr& o) { onTargetAdd(o); },
    });
  }
  for (auto& informer : statefulset_informers_) {
    informer->addEventHandlers(k8s::EventHandlers{
        .on_add = [this](const k8s::ObjectPtr& o) { onStatefulSetAdd(o); },
        .on_update = [this](const k8s::ObjectPtr& a,
                            const k8s::ObjectPtr& b) { onStatefulSetUpdate(a, b); },
        .on_delete = [this](const k8s::ObjectPtr& o) { onStatefulSetDelete(o); },
    });
  }
  std::lock_guard lock(stop_mutex_);
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    threads_.emplace_back([this] { reconcileWorker(); });
  }
  threads_.emplace_back([this] { statusWorker(); });
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
  reconcile_queue_.shutDown();
  status_queue_.shutDown();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // Each informer's stop waits for its watch to notice (about a second): stop them together.
  std::vector<std::thread> stoppers;
  for (auto* informers : {&target_informers_, &statefulset_informers_}) {
    for (auto& informer : *informers) {
      stoppers.emplace_back([&informer] { informer->stop(); });
    }
  }
  for (auto& stopper : stoppers) stopper.join();
}

// ---- event handlers -------------------------------------------------------------------------

void TargetController::onTargetAdd(const k8s::ObjectPtr& object) {
  if (!managedByController(*object, options_.controller_id)) return;
  reconcile_queue_.add(k8s::objectKey(*object));
}

void TargetController::onTargetUpdate(const k8s::ObjectPtr& old_object,
                                      const k8s::ObjectPtr& new_object) {
  if (!managedByController(*new_object, options_.controller_id)) return;
  if (deletionInProgress(*new_object)) return;
  if (!stateChanged(*old_object, *new_object)) return;  // status writes and resyncs
  reconcile_queue_.add(k8s::objectKey(*new_object));
}

void TargetController::onStatefulSetAdd(const k8s::ObjectPtr& object) {
  if (auto key = ownerKey(*object)) reconcile_queue_.add(*key);
}

void TargetController::onStatefulSetUpdate(const k8s::ObjectPtr& old_object,
                                           const k8s::ObjectPtr& new_object) {
  if (deletionInProgress(*new_object)) return;
  if (k8s::resourceVersionOf(*old_object) == k8s::resourceVersionOf(*new_object)) return;
  auto key = ownerKey(*new_object);
  if (!key) return;
  if (!stateChanged(*old_object, *new_object)) {
    status_queue_.add(*key);
    return;
  }
  reconcile_queue_.add(*key);
}

void TargetController::onStatefulSetDelete(const k8s::ObjectPtr& object) {
  if (auto key = ownerKey(*object)) reconcile_queue_.add(*key);
}

std::optional<TargetController::Key> TargetController::ownerKey(const Json& statefulset) const {
  const Json refs = metadataOf(statefulset).value("ownerReferences", Json::array());
  for (const auto& ref : refs) {
    if (!ref.value("controller", false) || ref.value("kind", "") != kind_.kind) continue;
    auto owner = cachedTarget(namespaceOf(statefulset), ref.value("name", ""));
    if (!owner || !managedByController(*owner, options_.controller_id)) return std::nullopt;
    return k8s::objectKey(*owner);
  }
  return std::nullopt;
}

// ---- workers --------------------------------------------------------------------------------

void TargetController::reconcileWorker() {
  while (auto key = reconcile_queue_.get()) {
    auto result = sync(*key);
    if (result) {
      reconcile_queue_.forget(*key);
    } else {
      spdlog::warn("event=sync_failed kind={} key={} error=\"{}\" action=requeue_with_backoff",
                   kind_.kind, *key, result.error().message);
      reconcile_queue_.addRateLimited(*key);
    }
    status_queue_.add(*key);  // processNextReconcileItem: every sync is followed by a status
    reconcile_queue_.done(*key);
  }
}

void TargetController::statusWorker() {
  while (auto key = status_queue_.get()) {
    auto result = updateStatus(*key);
    if (result) {
      status_queue_.forget(*key);
    } else {
      spdlog::warn("event=status_failed kind={} key={} error=\"{}\" action=requeue_with_backoff",
                   kind_.kind, *key, result.error().message);
      status_queue_.addRateLimited(*key);
    }
    status_queue_.done(*key);
  }
}

void TargetController::periodicLoop(std::chrono::milliseconds period, bool status_only) {
  std::unique_lock lock(stop_mutex_);
  while (!stopping_) {
    if (clock_.waitUntil(lock, stop_cv_, clock_.deadlineAfter(period),
                         [this] { return stopping_; })) {
      return;
    }
    lock.unlock();
    for (const auto& target : allTargets()) {
      if (!managedByController(*target, options_.controller_id)) continue;
      const std::string key = k8s::objectKey(*target);
      if (!status_only) {
        reconcile_queue_.add(key);
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
      if (!available) status_queue_.add(key);
    }
    lock.lock();
  }
}

// ---- sync -----------------------------------------------------------------------------------

k8s::Result<void> TargetController::sync(const Key& key) {
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  Action record{.verb = "sync", .kind = kind_.kind, .ns = ns, .name = name};
  auto finish = [&](std::string outcome) {
    record.outcome = std::move(outcome);
    log_.record(record);
  };

  auto object = cachedTarget(ns, name);
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

  auto result = syncConfigSecret(target);
  if (result) result = syncGoverningService(target);
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

k8s::Result<std::string> TargetController::loadAdditionalScrapeConfigs(const Json& target) {
  auto ref = additionalScrapeConfigsRef(target);
  if (!ref) return std::string();
  auto secret = client_.get(k8s::resources::secrets(), namespaceOf(target), ref->name);
  if (!secret) {
    if (secret.error().is(k8s::ErrorKind::NotFound) && ref->optional) return std::string();
    return wrap("loading additional scrape configs from Secret failed", secret.error());
  }
  const Json data = secret->value("data", Json::object());
  auto value = data.find(ref->key);
  if (value == data.end() || !value->is_string()) {
    if (ref->optional) return std::string();
    return k8s::makeError(k8s::ErrorKind::NotFound,
                          "loading additional scrape configs from Secret failed: key " + ref->key +
                              " could not be found in secret " + ref->name);
  }
  return base64Decode(value->get<std::string>());
}

k8s::Result<void> TargetController::syncConfigSecret(const Json& target) {
  const std::string ns = namespaceOf(target);
  const std::string secret_name = configSecretName(kind_, nameOf(target));
  if (unmanagedConfiguration(kind_, target)) {
    // The user manages the configuration: create an empty Secret once, never touch it after.
    auto existing = client_.get(k8s::resources::secrets(), ns, secret_name);
    if (existing) return {};
    if (!existing.error().is(k8s::ErrorKind::NotFound)) {
      return wrap("creating config failed", existing.error());
    }
    auto created = client_.create(k8s::resources::secrets(), ns,
                                  makeConfigSecret(kind_, target, std::string()));
    recordWrite("create", "Secret", target, secret_name, std::nullopt,
                "empty configuration (unmanaged)", created);
    if (!created && !created.error().is(k8s::ErrorKind::AlreadyExists)) {
      return wrap("creating config failed", created.error());
    }
    return {};
  }

  auto additional = loadAdditionalScrapeConfigs(target);
  if (!additional) return wrap("creating config failed", additional.error());
  auto config = generateConfiguration(kind_, target, *additional);
  if (!config) return wrap("creating config failed", config.error());
  const Json desired = makeConfigSecret(kind_, target, *config);

  // CreateOrUpdateSecret: the merged object never equals the server's (uid, timestamps), so
  // the operator writes it on every sync; so does the emulator.
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto existing = client_.get(k8s::resources::secrets(), ns, secret_name);
    if (!existing) {
      if (!existing.error().is(k8s::ErrorKind::NotFound)) {
        return wrap("creating config failed", existing.error());
      }
      auto created = client_.create(k8s::resources::secrets(), ns, desired);
      recordWrite("create", "Secret", target, secret_name, std::nullopt, "configuration", created);
      if (created) return {};
      if (created.error().is(k8s::ErrorKind::AlreadyExists)) continue;
      return wrap("creating config failed", created.error());
    }
    Json update = desired;
    mergeMetadata(update, *existing);
    auto updated = client_.update(k8s::resources::secrets(), ns, update);
    recordWrite("update", "Secret", target, secret_name, std::nullopt, "configuration", updated);
    if (updated) return {};
    if (!updated.error().is(k8s::ErrorKind::Conflict)) {
      return wrap("creating config failed", updated.error());
    }
  }
  return k8s::makeError(k8s::ErrorKind::Conflict,
                        "creating config failed: conflicts on Secret " + secret_name);
}

k8s::Result<void> TargetController::syncGoverningService(const Json& target) {
  const std::string ns = namespaceOf(target);
  Json desired = makeGoverningService(kind_, target);
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    auto existing = client_.get(services(), ns, kind_.governing_service);
    if (!existing) {
      if (!existing.error().is(k8s::ErrorKind::NotFound)) {
        return wrap("synchronizing default governing service failed", existing.error());
      }
      auto created = client_.create(services(), ns, desired);
      recordWrite("create", "Service", target, kind_.governing_service, std::nullopt,
                  "governing service", created);
      if (created) return {};
      if (created.error().is(k8s::ErrorKind::AlreadyExists)) continue;
      return wrap("synchronizing default governing service failed", created.error());
    }
    Json update = desired;
    const Json old_spec = objectField(*existing, "spec");
    for (const char* immutable : {"ipFamilies", "ipFamilyPolicy", "clusterIP", "clusterIPs"}) {
      if (auto v = old_spec.find(immutable); v != old_spec.end()) update["spec"][immutable] = *v;
    }
    update["metadata"]["ownerReferences"] =
        mergeOwnerReferences(metadataOf(*existing).value("ownerReferences", Json::array()),
                             desired["metadata"]["ownerReferences"]);
    mergeMetadata(update, *existing);
    auto updated = client_.update(services(), ns, update);
    recordWrite("update", "Service", target, kind_.governing_service, std::nullopt,
                "governing service", updated);
    if (updated) return {};
    if (!updated.error().is(k8s::ErrorKind::Conflict)) {
      return wrap("synchronizing default governing service failed", updated.error());
    }
  }
  return k8s::makeError(k8s::ErrorKind::Conflict,
                        "synchronizing default governing service failed: conflicts");
}

k8s::Result<void> TargetController::syncStatefulSets(const Json& target) {
  const std::string ns = namespaceOf(target);
  const auto expected = expectedStatefulSetNames(kind_, target);
  for (int shard = 0; shard < static_cast<int>(expected.size()); ++shard) {
    auto existing = cachedStatefulSet(ns, expected[shard]);
    if (existing && deletionInProgress(*existing)) continue;  // no update/delete hot loop
    const Json existing_spec = existing ? existing->value("spec", Json()) : Json();
    const std::string hash = statefulSetInputHash(target, existing_spec);
    Json desired = makeStatefulSet(kind_, target, shard, hash);
    if (!existing) {
      if (auto r = createStatefulSetOrPatchLabels(target, shard, desired); !r) {
        return wrap("failed to create statefulset", r.error());
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
  recordWrite("create", "StatefulSet", target, name, shard, "expected shard not in cache", created);
  if (created) return {};
  if (!created.error().is(k8s::ErrorKind::AlreadyExists)) {
    return std::unexpected(created.error());
  }
  // The object exists but the informer does not see it (a selector label is missing): put
  // the desired labels back with a strategic merge patch; nothing else changes.
  Json patch{{"metadata", {{"labels", desired["metadata"]["labels"]}}}};
  auto patched = client_.patch(k8s::resources::statefulSets(), ns, name,
                               k8s::PatchType::StrategicMerge, patch);
  recordWrite("patch", "StatefulSet", target, name, shard,
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
    if (!existing) return wrap("failed to update StatefulSet", existing.error());
    Json update = desired;
    mergeMetadata(update, *existing);
    copyKubectlTemplateAnnotations(update, *existing);
    auto updated = client_.update(k8s::resources::statefulSets(), ns, update);
    recordWrite("update", "StatefulSet", target, name, shard, "input hash changed", updated);
    if (updated) return {};
    if (updated.error().is(k8s::ErrorKind::Conflict)) continue;
    if (!updated.error().is(k8s::ErrorKind::Invalid)) {
      return wrap("failed to update StatefulSet", updated.error());
    }
    // Immutable fields changed: delete (foreground) and let the next sync recreate it.
    spdlog::info("event=recreate_statefulset kind={} statefulset={}/{} reason=\"{}\"", kind_.kind,
                 ns, name, updated.error().message);
    k8s::DeleteOptions options;
    options.propagation_policy = "Foreground";
    auto deleted = client_.remove(k8s::resources::statefulSets(), ns, name, options);
    recordWrite("delete", "StatefulSet", target, name, shard,
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
  for (const auto& object : cachedStatefulSets(ns)) {
    if (!matchesLabels(*object, selector)) continue;
    const std::string name = nameOf(*object);
    if (expected.contains(name) || deletionInProgress(*object)) continue;
    // The shard retention feature gate is off by default: excess shards are deleted.
    k8s::DeleteOptions options;
    options.propagation_policy = "Foreground";
    auto deleted = client_.remove(k8s::resources::statefulSets(), ns, name, options);
    recordWrite("delete", "StatefulSet", target, name,
                shardOfStatefulSetName(kind_, nameOf(target), name),
                "not expected for " + std::to_string(expected.size()) + " shard(s)", deleted);
    if (!deleted && !deleted.error().is(k8s::ErrorKind::NotFound)) {
      errors += (errors.empty() ? "" : "; ") + std::string("failed to delete StatefulSet ") + name +
                ": " + deleted.error().describe();
    }
  }
  if (!errors.empty()) {
    return k8s::makeError(k8s::ErrorKind::Other,
                          "failed to clean up excess StatefulSets: " + errors);
  }
  return {};
}

// ---- status ---------------------------------------------------------------------------------

k8s::Result<void> TargetController::updateStatus(const Key& key) {
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash);
  const std::string name = key.substr(slash + 1);
  auto object = cachedTarget(ns, name);
  if (!object || deletionInProgress(*object)) return {};
  const Json& target = *object;

  std::vector<ShardObservation> shards;
  const auto expected = expectedStatefulSetNames(kind_, target);
  for (int shard = 0; shard < static_cast<int>(expected.size()); ++shard) {
    ShardObservation observation{.shard = shard, .statefulset_name = expected[shard]};
    if (auto sts = cachedStatefulSet(ns, expected[shard])) {
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
      if (!pods) return wrap("failed to retrieve statefulset state", pods.error());
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
  recordWrite("patch", kind_.kind, target, name, std::nullopt, "status", patched, "status");
  if (!patched) return wrap("failed to update status", patched.error());
  return {};
}

// ---- caches ---------------------------------------------------------------------------------

const k8s::Informer* TargetController::informerFor(
    const std::vector<std::unique_ptr<k8s::Informer>>& informers, const std::string& ns) const {
  if (options_.namespaces.empty()) return informers.front().get();
  for (std::size_t i = 0; i < options_.namespaces.size(); ++i) {
    if (options_.namespaces[i] == ns) return informers[i].get();
  }
  return nullptr;
}

k8s::ObjectPtr TargetController::cachedTarget(const std::string& ns,
                                              const std::string& name) const {
  const auto* informer = informerFor(target_informers_, ns);
  return informer ? informer->store().get(ns, name) : nullptr;
}

k8s::ObjectPtr TargetController::cachedStatefulSet(const std::string& ns,
                                                   const std::string& name) const {
  const auto* informer = informerFor(statefulset_informers_, ns);
  return informer ? informer->store().get(ns, name) : nullptr;
}

std::vector<k8s::ObjectPtr> TargetController::cachedStatefulSets(const std::string& ns) const {
  const auto* informer = informerFor(statefulset_informers_, ns);
  return informer ? informer->store().listNamespace(ns) : std::vector<k8s::ObjectPtr>{};
}

std::vector<k8s::ObjectPtr> TargetController::allTargets() const {
  std::vector<k8s::ObjectPtr> out;
  for (const auto& informer : target_informers_) {
    auto objects = informer->store().list();
    out.insert(out.end(), objects.begin(), objects.end());
  }
  return out;
}

void TargetController::recordWrite(const std::string& verb, const std::string& kind,
                                   const Json& target, const std::string& name,
                                   std::optional<int> shard, const std::string& reason,
                                   const k8s::Result<Json>& result,
                                   const std::string& subresource) {
  Action action{.verb = verb,
                .kind = kind,
                .ns = namespaceOf(target),
                .name = name,
                .shard = shard,
                .subresource = subresource,
                .owner = kind_.kind + "/" + nameOf(target),
                .reason = reason,
                .outcome = result ? "ok" : "error: " + result.error().describe()};
  log_.record(action);
  if (result) {
    spdlog::info("event=write verb={} kind={} object={}/{}{} reason=\"{}\"", verb, kind, action.ns,
                 name, subresource.empty() ? "" : "/" + subresource, reason);
  } else {
    spdlog::warn("event=write_failed verb={} kind={} object={}/{}{} reason=\"{}\" error=\"{}\"",
                 verb, kind, action.ns, name, subresource.empty() ? "" : "/" + subresource, reason,
                 result.error().describe());
  }
}

}  // namespace shardscaler::emulator
