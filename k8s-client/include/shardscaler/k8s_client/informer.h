// A local, always-current cache of one resource (list + watch into a Store) that tells
// handlers what was added, updated and deleted. It only reads from the server, never writes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/backoff.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/reflector.h"
#include "shardscaler/k8s_client/store.h"

namespace shardscaler::k8s {

struct InformerOptions {
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;
  // > 0: every period, on_update(obj, obj) for every cached object (a level-triggered nudge).
  std::chrono::milliseconds resync_period{0};
  // What the cache keeps of each object, decided before it is decoded: metadata only
  // (PartialObjectMetadata from the server) and/or only these fields. Handlers and readers of
  // the store must then read nothing else.
  bool metadata_only = false;
  std::shared_ptr<const FieldMask> fields;
  // Applied to each object before it is stored, e.g. dropManagedFields to save memory.
  std::function<void(Json&)> transform;
  // Indexes the store keeps up to date (Store::byIndex), e.g. ShardSets by their target.
  Indexers indexers;
  // See ReflectorOptions::on_watch_restart.
  std::function<void(std::string_view reason)> on_watch_restart;
  BackoffOptions backoff;
  std::chrono::seconds min_watch_timeout{300};
};

// Any member may be empty. Handlers run one at a time, on the informer's threads, with the
// store already showing the change; they should be quick (typically: enqueue a key).
struct EventHandlers {
  std::function<void(const ObjectPtr&)> on_add;
  std::function<void(const ObjectPtr& old_object, const ObjectPtr& new_object)> on_update;
  // The final state from the watch, or after a relist the last state this cache saw of an
  // object that vanished while the watch was down.
  std::function<void(const ObjectPtr&)> on_delete;
};

// Removes metadata.managedFields: a transform for InformerOptions.
void dropManagedFields(Json& object);

// An informer's lifecycle (started, stopping, synced) and the waits on it.
// Thread-safety: all methods from any thread.
class InformerLifecycle {
 public:
  explicit InformerLifecycle(const Clock& clock) : clock_(clock) {}
  // Runs `start_threads` under the lifecycle's lock, once, unless already started or stopping.
  void start(const std::function<void()>& start_threads);
  void markStopping();
  void markSynced();
  bool synced() const;
  // Until synced or stopping (on the Clock); false on timeout or stop.
  bool waitForSync(std::chrono::nanoseconds timeout) const;
  // Waits `period` (on the Clock); true when stopping, at once or meanwhile.
  bool waitForStop(std::chrono::nanoseconds period) const;

 private:
  const Clock& clock_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool started_ = false;
  bool stopping_ = false;
  bool synced_ = false;
};

// A relist (after 410 Gone or an error) is diffed against the cache: new objects -> on_add,
// changed resourceVersion -> on_update, missing -> on_delete; unchanged objects are silent.
//
// Thread-safety: all methods may be called from any thread. start() once; stop() is
// idempotent and joins the informer's threads (one reflector thread, plus a resync thread
// when resync_period > 0); it returns as soon as the KubeClient call in flight returns.
// requestStop() only asks, without waiting: a watch notices within about a second (libcurl's
// progress callback), so stopping many informers means requestStop() on all, then stop() on
// each, for one such wait in all instead of one each. Handlers must not call either.
class Informer : private ReflectorSink {
 public:
  Informer(KubeClient& client, Resource resource, const InformerOptions& options,
           const Clock& clock);
  ~Informer() override;
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // May be called before or after start(); a handler added late first gets on_add for every
  // object already cached, then the live stream, with nothing missed or repeated.
  void addEventHandlers(EventHandlers handlers);
  void start();
  void requestStop();
  void stop();

  // True once the first list has been stored and its handlers have run.
  bool hasSynced() const;
  // Waits (on the Clock) until synced or stopped; false on timeout or stop.
  bool waitForSync(std::chrono::nanoseconds timeout) const;

  const Store& store() const { return store_; }
  std::string lastSyncResourceVersion() const { return reflector_.lastSyncResourceVersion(); }
  ReflectorStats stats() const { return reflector_.stats(); }

 private:
  void onReplace(std::vector<ObjectPtr> objects, const std::string& resource_version) override;
  void onEvent(WatchEventType type, ObjectPtr object) override;
  void resyncLoop();
  void callAdd(const ObjectPtr& object);
  void callUpdate(const ObjectPtr& old_object, const ObjectPtr& new_object);
  void callDelete(const ObjectPtr& object);

  std::chrono::milliseconds resync_period_;
  Store store_;
  Reflector reflector_;

  // Held while the store changes and handlers run, so handlers see changes one at a time and
  // in order, and a late addEventHandlers() sees a consistent store.
  std::mutex dispatch_mutex_;
  std::vector<EventHandlers> handlers_;

  InformerLifecycle lifecycle_;
  std::thread reflector_thread_;
  std::thread resync_thread_;
};

}  // namespace shardscaler::k8s
