#include "shardscaler/k8s_client/informer.h"

#include <exception>
#include <utility>

#include "shardscaler/k8s_client/log.h"

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
void guarded(const char* what, const ObjectPtr& object, F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    log(LogLevel::Error, "informer handler threw",
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
    : clock_(clock),
      resync_period_(options.resync_period),
      store_(options.indexers),
      reflector_(client, std::move(resource), reflectorOptions(options), *this, clock) {}

Informer::~Informer() { stop(); }

void Informer::addEventHandlers(EventHandlers handlers) {
  std::lock_guard dispatch(dispatch_mutex_);
  if (handlers.on_add) {
    for (const auto& object : store_.list()) {
      guarded("add", object, [&] { handlers.on_add(object); });
    }
  }
  handlers_.push_back(std::move(handlers));
}

void Informer::start() {
  std::lock_guard lock(state_mutex_);
  if (started_ || stopping_) return;
  started_ = true;
  reflector_thread_ = std::thread([this] { reflector_.run(); });
  if (resync_period_ > std::chrono::milliseconds::zero()) {
    resync_thread_ = std::thread([this] { resyncLoop(); });
  }
}

void Informer::requestStop() {
  {
    std::lock_guard lock(state_mutex_);
    stopping_ = true;
  }
  state_cv_.notify_all();
  reflector_.stop();
}

void Informer::stop() {
  requestStop();
  if (reflector_thread_.joinable()) reflector_thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::hasSynced() const {
  std::lock_guard lock(state_mutex_);
  return synced_;
}

bool Informer::waitForSync(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(state_mutex_);
  clock_.waitUntil(lock, state_cv_, clock_.deadlineAfter(timeout),
                   [this] { return synced_ || stopping_; });
  return synced_;
}

void Informer::onReplace(std::vector<ObjectPtr> objects, const std::string& resource_version) {
  {
    std::lock_guard dispatch(dispatch_mutex_);
    auto diff = store_.replace(std::move(objects));
    for (const auto& object : diff.added) callAdd(object);
    for (const auto& [old_object, new_object] : diff.updated) callUpdate(old_object, new_object);
    for (const auto& object : diff.deleted) callDelete(object);
    log(LogLevel::Debug, "informer replaced",
        {{"resource_version", resource_version},
         {"added", diff.added.size()},
         {"updated", diff.updated.size()},
         {"deleted", diff.deleted.size()},
         {"size", store_.size()}});
  }
  {
    std::lock_guard lock(state_mutex_);
    synced_ = true;
  }
  state_cv_.notify_all();
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
  std::unique_lock lock(state_mutex_);
  while (!stopping_) {
    auto deadline = clock_.deadlineAfter(resync_period_);
    if (clock_.waitUntil(lock, state_cv_, deadline, [this] { return stopping_; })) break;
    if (!synced_) continue;
    lock.unlock();
    {
      std::lock_guard dispatch(dispatch_mutex_);
      for (const auto& object : store_.list()) callUpdate(object, object);
    }
    lock.lock();
  }
}

void Informer::callAdd(const ObjectPtr& object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_add) guarded("add", object, [&] { handlers.on_add(object); });
  }
}

void Informer::callUpdate(const ObjectPtr& old_object, const ObjectPtr& new_object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_update) {
      guarded("update", new_object, [&] { handlers.on_update(old_object, new_object); });
    }
  }
}

void Informer::callDelete(const ObjectPtr& object) {
  for (const auto& handlers : handlers_) {
    if (handlers.on_delete) guarded("delete", object, [&] { handlers.on_delete(object); });
  }
}

}  // namespace shardscaler::k8s
