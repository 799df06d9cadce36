#include "shardscaler/k8s_client/informer.h"

#include <exception>
#include <utility>

#include "shardscaler/base/log.h"

namespace shardscaler::k8s {

namespace {

ReflectorOptions reflectorOptions(const InformerOptions& options) {
  ReflectorOptions out;
  out.ns = options.ns;
  out.label_selector = options.label_selector;
  out.field_selector = options.field_selector;
  out.page_size = options.page_size;
  out.min_watch_timeout = options.min_watch_timeout;
  out.backoff = options.backoff;
  out.metadata_only = options.metadata_only;
  out.fields = options.fields;
  out.transform = options.transform;
  out.on_watch_restart = options.on_watch_restart;
  return out;
}

// A throwing handler must not kill the informer thread nor skip the other handlers.
template <typename F>
void callHandlerCatching(const char* what, const ObjectPtr& object, F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    base::logEvent(base::LogLevel::Error, "informer handler threw",
                   {{"handler", what},
                    {"object", object ? objectKey(*object) : std::string()},
                    {"error", e.what()}});
  }
}

}  // namespace

void dropManagedFields(Json& object) {
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    meta->erase("managedFields");
  }
}

Informer::Informer(KubeClient& client, Resource resource, const InformerOptions& options,
                   const Clock& clock)
    : resync_period_(options.resync_period),
      store_(options.indexers),
      reflector_(client, std::move(resource), reflectorOptions(options), *this, clock),
      lifecycle_(clock) {}

Informer::~Informer() { stop(); }

void Informer::addEventHandlers(EventHandlers handlers) {
  std::lock_guard dispatch(dispatch_mutex_);
  if (handlers.on_add) {
    for (const auto& object : store_.list()) {
      callHandlerCatching("add", object, [&] { handlers.on_add(object); });
    }
  }
  handlers_.push_back(std::move(handlers));
}

void InformerLifecycle::start(const std::function<void()>& start_threads) {
  std::lock_guard lock(mutex_);
  if (started_ || stopping_) return;
  started_ = true;
  start_threads();
}

void InformerLifecycle::markStopping() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void InformerLifecycle::markSynced() {
  {
    std::lock_guard lock(mutex_);
    synced_ = true;
  }
  changed_.notify_all();
}

bool InformerLifecycle::synced() const {
  std::lock_guard lock(mutex_);
  return synced_;
}

bool InformerLifecycle::waitForSync(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  clock_.waitUntil(lock, changed_, clock_.deadlineAfter(timeout),
                   [this] { return synced_ || stopping_; });
  return synced_;
}

bool InformerLifecycle::waitForStop(std::chrono::nanoseconds period) const {
  std::unique_lock lock(mutex_);
  if (stopping_) return true;
  return clock_.waitUntil(lock, changed_, clock_.deadlineAfter(period),
                          [this] { return stopping_; });
}

void Informer::start() {
  lifecycle_.start([this] {
    reflector_thread_ = std::thread([this] { reflector_.run(); });
    if (resync_period_ > std::chrono::milliseconds::zero()) {
      resync_thread_ = std::thread([this] { resyncLoop(); });
    }
  });
}

void Informer::requestStop() {
  lifecycle_.markStopping();
  reflector_.stop();
}

void Informer::stop() {
  requestStop();
  if (reflector_thread_.joinable()) reflector_thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::hasSynced() const { return lifecycle_.synced(); }

bool Informer::waitForSync(std::chrono::nanoseconds timeout) const {
  return lifecycle_.waitForSync(timeout);
}

void Informer::onReplace(std::vector<ObjectPtr> objects, const std::string& resource_version) {
  {
    std::lock_guard dispatch(dispatch_mutex_);
    auto diff = store_.replace(std::move(objects));
    for (const auto& object : diff.added) callAdd(object);
    for (const auto& [old_object, new_object] : diff.updated) callUpdate(old_object, new_object);
    for (const auto& object : diff.deleted) callDelete(object);
    base::logEvent(base::LogLevel::Debug, "informer replaced",
                   {{"resource_version", resource_version},
                    {"added", diff.added.size()},
                    {"updated", diff.updated.size()},
                    {"deleted", diff.deleted.size()},
                    {"size", store_.size()}});
  }
  lifecycle_.markSynced();
}

void Informer::onEvent(WatchEventType type, ObjectPtr object) {
  std::lock_guard dispatch(dispatch_mutex_);
  if (type == WatchEventType::Deleted) {
    // Nothing to tell if the cache never had it (e.g. created and deleted while relisting).
    if (store_.erase(objectKey(*object))) callDelete(object);
    return;
  }
  auto previous = store_.upsert(object);
  if (previous) {
    callUpdate(previous, object);
  } else {
    callAdd(object);
  }
}

void Informer::resyncLoop() {
  while (!lifecycle_.waitForStop(resync_period_)) {
    if (!lifecycle_.synced()) continue;
    std::lock_guard dispatch(dispatch_mutex_);
    for (const auto& object : store_.list()) callUpdate(object, object);
  }
}

void Informer::callAdd(const ObjectPtr& object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_add) callHandlerCatching("add", object, [&] { handlers.on_add(object); });
  }
}

void Informer::callUpdate(const ObjectPtr& old_object, const ObjectPtr& new_object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_update) {
      callHandlerCatching("update", new_object,
                          [&] { handlers.on_update(old_object, new_object); });
    }
  }
}

void Informer::callDelete(const ObjectPtr& object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_delete)
      callHandlerCatching("delete", object, [&] { handlers.on_delete(object); });
  }
}

}  // namespace shardscaler::k8s
