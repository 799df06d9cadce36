// Keeps a ReflectorSink in step with one resource on the server: list, then watch from the
// list's resourceVersion, resuming after disconnects and relisting when history is gone.
// It never changes anything on the server and never calls the sink from two threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/backoff.h"
#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/store.h"

namespace shardscaler::k8s {

// Receives the reflector's view of the resource, always on the reflector's thread.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // The complete set of matching objects as of `resource_version` (after a list or relist).
  virtual void onReplace(std::vector<ObjectPtr> objects, const std::string& resource_version) = 0;
  // One watch event; `type` is Added, Modified or Deleted (for Deleted: the final state).
  virtual void onEvent(WatchEventType type, ObjectPtr object) = 0;
};

struct ReflectorOptions {
  std::string ns;  // "" = all namespaces (or a cluster-scoped resource)
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;  // list limit; pages are followed via continue tokens
  // Each watch asks the server to end it after a random time in [min, 2 * min), so that
  // watches of many clients do not all restart together.
  std::chrono::seconds min_watch_timeout{300};
  BackoffOptions backoff;
  // Lists and watches PartialObjectMetadata (see ListOptions::metadata_only).
  bool metadata_only = false;
  // Only these fields of each object are decoded (see ListOptions::fields); nullptr: all.
  std::shared_ptr<const FieldMask> fields;
  // Applied to every object before the sink sees it, e.g. to drop metadata.managedFields.
  std::function<void(Json&)> transform;
  // Called (on the reflector's thread) each time a watch ends other than by the server's normal
  // close: reason "error" (disconnect, error event, 5xx, ...) or "gone" (410, relisted). For a
  // watch-restarts metric; must be cheap.
  std::function<void(std::string_view reason)> on_watch_restart;
};

// Counters for metrics; every failure path also logs at warn.
struct ReflectorStats {
  std::uint64_t lists = 0;
  std::uint64_t list_errors = 0;
  std::uint64_t watches = 0;
  std::uint64_t watch_errors = 0;  // disconnects and error events, 410 excluded
  std::uint64_t watch_gone = 0;    // 410 Gone: history compacted, relisted
  std::uint64_t events = 0;        // added/modified/deleted delivered to the sink
  std::uint64_t bookmarks = 0;
};

// What happens when:
// - a watch ends normally (server timeout): watch again from the last resourceVersion;
// - a watch breaks (transport, timeout, 5xx, 429): back off, then resume from the last
//   resourceVersion, which bookmarks keep fresh;
// - 410 Gone: relist at once (a second 410 with no event in between backs off first);
// - any other error (403, error event, ...): back off, then relist;
// - a watch that ends with no event within a second counts as a failure (backs off).
// Backoff: ExponentialBackoff (0.8 s .. 30 s, jittered by default).
//
// Thread-safety: run() on one thread; stop(), hasSynced(), lastSyncResourceVersion() and
// stats() from any thread.
class Reflector {
 public:
  Reflector(KubeClient& client, Resource resource, ReflectorOptions options, ReflectorSink& sink,
            const Clock& clock);
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Blocks until stop(). Returns once the KubeClient call in flight returns; a watch ends
  // as soon as the client notices the stop flag it is handed.
  void run();
  void stop();

  bool hasSynced() const { return synced_.load(); }
  std::string lastSyncResourceVersion() const;
  ReflectorStats stats() const;

 private:
  enum class WatchEnd { Stopped, Closed, Gone, Resumable, NeedsRelist };
  bool listAndReplace();
  WatchEnd watchOnce(std::uint64_t& events, std::chrono::nanoseconds& wait_at_least);
  bool handleEvent(WatchEvent&& event, std::uint64_t& events, WatchEnd& end);
  // Waits for the next backoff delay (at least `at_least`); false if stopped meanwhile.
  bool backoffWait(std::chrono::nanoseconds at_least = {});
  void setResourceVersion(std::string rv);
  // Logs with this reflector's resource, namespace and selector as fields, then `more`.
  void logEvent(base::LogLevel level, std::string_view msg,
                std::initializer_list<base::LogField> more) const;

  KubeClient& client_;
  Resource resource_;
  ReflectorOptions options_;
  ReflectorSink& sink_;
  const Clock& clock_;
  ExponentialBackoff backoff_;
  std::mt19937 random_{std::random_device{}()};  // watch timeouts; run() thread only

  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  mutable std::mutex mutex_;  // guards the fields below and is the wait mutex of cv_
  std::condition_variable cv_;
  std::string resource_version_;
  ReflectorStats stats_;
};

}  // namespace shardscaler::k8s
