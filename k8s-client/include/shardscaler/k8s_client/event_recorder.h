// Kubernetes Events for `kubectl describe` (client-go's tools/record): what a controller did and
// why. Recording never blocks a reconcile and never fails one; a lost Event is logged and counted.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {

// The object an Event is about (core/v1 ObjectReference).
struct InvolvedObject {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
};

// core/v1 Event.type.
enum class EventType { Normal, Warning };
std::string_view toString(EventType type);

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  virtual void record(const InvolvedObject& object, EventType type, const std::string& reason,
                      const std::string& message) = 0;
};

// Writes Events from a background thread. Like client-go's EventCorrelator, an Event equal to
// one sent in the last 10 minutes (same object, type, reason, message) bumps that Event's count
// instead of creating another, so a condition re-reported on every reconcile stays one line.
// Thread-safety: record() may be called from any thread.
class KubeEventRecorder final : public EventRecorder {
 public:
  struct Options {
    std::string component = "shardscaler";
    std::string instance;            // reportingInstance, e.g. the pod name
    std::size_t queue_limit = 1000;  // beyond this, new Events are dropped (and counted)
    std::size_t correlation_cache = 4096;
    std::chrono::minutes aggregation_window{10};
  };
  // Called with a short reason ("event_dropped", "event_write_failed") on every lost Event.
  using DegradedHook = std::function<void(const std::string& reason)>;

  KubeEventRecorder(KubeClient& client, const Clock& clock, Options options,
                    DegradedHook on_degraded = {});
  ~KubeEventRecorder() override;  // sends what is queued (bounded by one request each), stops

  void record(const InvolvedObject& object, EventType type, const std::string& reason,
              const std::string& message) override;
  // Blocks until every Event recorded so far has been written or given up (tests, shutdown).
  void flush();

 private:
  struct Pending {
    InvolvedObject object;
    EventType type;
    std::string reason;
    std::string message;
    Clock::SystemTime at;
  };
  struct Sent {
    std::string event_name;
    int count = 0;
    Clock::SystemTime first;
    Clock::SystemTime last;
    std::list<std::string>::iterator lru;
  };

  void run();
  void write(const Pending& pending);
  bool bumpExisting(const Pending& pending, Sent& sent);
  void createNew(const Pending& pending, const std::string& key);
  void remember(const std::string& key, Sent sent);

  KubeClient& client_;
  const Clock& clock_;
  Options options_;
  DegradedHook on_degraded_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  std::size_t in_flight_ = 0;
  bool stopping_ = false;

  // Touched only by the writer thread.
  std::unordered_map<std::string, Sent> sent_;
  std::list<std::string> lru_;

  std::thread writer_;
};

}  // namespace shardscaler::k8s
