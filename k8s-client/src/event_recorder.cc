#include "shardscaler/k8s_client/event_recorder.h"

#include <fmt/format.h>
#include <random>

#include "shardscaler/base/log.h"
#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::k8s {

std::string_view toString(EventType type) {
  return type == EventType::Normal ? "Normal" : "Warning";
}

namespace {

std::string typeName(EventType type) { return std::string(toString(type)); }

// "namespace/name": the same `key` field the reconcile of that ShardSet logs.
std::string involvedKey(const InvolvedObject& o) { return o.ns + "/" + o.name; }

// Where the Event lives: its object's namespace, or "default" for a cluster-scoped object (as
// client-go's recorder puts it, and where `kubectl describe` finds it).
std::string eventNamespace(const InvolvedObject& o) { return o.ns.empty() ? "default" : o.ns; }

std::string correlationKey(const InvolvedObject& o, EventType type, const std::string& reason,
                           const std::string& message) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", o.ns, o.kind, o.name, o.uid,
                     typeName(type), reason, message);
}

// client-go names Events "<object>.<unix nanos in hex>"; a random suffix keeps two recorders
// (two replicas during a hand-over) from colliding.
std::string eventName(const InvolvedObject& o, Clock::SystemTime at) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  return fmt::format("{}.{:x}{:04x}", o.name, nanos, random() & 0xffff);
}

// metav1.Time: RFC3339 in whole seconds.
std::string eventTime(Clock::SystemTime at) { return formatTime(at); }

}  // namespace

KubeEventRecorder::KubeEventRecorder(KubeClient& client, const Clock& clock, Options options,
                                     DegradedHook on_degraded)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      on_degraded_(std::move(on_degraded)),
      writer_([this] { run(); }) {}

KubeEventRecorder::~KubeEventRecorder() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();
}

void KubeEventRecorder::record(const InvolvedObject& object, EventType type,
                               const std::string& reason, const std::string& message) {
  base::logEvent(base::LogLevel::Info, "event",
                 {{"key", involvedKey(object)},
                  {"type", typeName(type)},
                  {"reason", reason},
                  {"message", message}});
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= options_.queue_limit) {
      base::logEvent(base::LogLevel::Warn, "event dropped: queue full or shutting down",
                     {{"key", involvedKey(object)}, {"reason", reason}});
      if (on_degraded_) on_degraded_("event_dropped");
      return;
    }
    queue_.push_back(Pending{object, type, reason, message, clock_.now()});
  }
  changed_.notify_all();
}

void KubeEventRecorder::flush() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && in_flight_ == 0; });
}

void KubeEventRecorder::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    Pending pending = std::move(queue_.front());
    queue_.pop_front();
    ++in_flight_;
    lock.unlock();
    write(pending);
    lock.lock();
    --in_flight_;
    changed_.notify_all();
  }
}

void KubeEventRecorder::write(const Pending& pending) {
  std::string key = correlationKey(pending.object, pending.type, pending.reason, pending.message);
  auto it = sent_.find(key);
  if (it != sent_.end() && pending.at - it->second.last < options_.aggregation_window &&
      bumpExisting(pending, it->second)) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;
  }
  createNew(pending, key);
}

bool KubeEventRecorder::bumpExisting(const Pending& pending, Sent& sent) {
  Json patch = {{"count", sent.count + 1}, {"lastTimestamp", eventTime(pending.at)}};
  auto result = client_.patch(resources::events(), eventNamespace(pending.object), sent.event_name,
                              PatchType::Merge, patch);
  if (!result) {
    // Expired or deleted by the server's event TTL: start a new Event.
    if (!result.error().is(ErrorKind::NotFound)) {
      base::logEvent(base::LogLevel::Warn, "event update failed",
                     {{"key", involvedKey(pending.object)},
                      {"reason", pending.reason},
                      {"error", result.error().describe()}});
    }
    return false;
  }
  ++sent.count;
  sent.last = pending.at;
  return true;
}

void KubeEventRecorder::createNew(const Pending& pending, const std::string& key) {
  const InvolvedObject& o = pending.object;
  std::string name = eventName(o, pending.at);
  std::string at = eventTime(pending.at);
  Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", eventNamespace(o)}}},
      {"involvedObject",
       {{"apiVersion", o.api_version},
        {"kind", o.kind},
        {"namespace", o.ns},
        {"name", o.name},
        {"uid", o.uid},
        {"resourceVersion", o.resource_version}}},
      {"type", typeName(pending.type)},
      {"reason", pending.reason},
      {"message", pending.message},
      {"source", {{"component", options_.component}}},
      {"reportingComponent", options_.component},
      {"reportingInstance", options_.instance},
      {"firstTimestamp", at},
      {"lastTimestamp", at},
      {"count", 1},
  };
  auto result = client_.create(resources::events(), eventNamespace(o), event);
  if (!result) {
    base::logEvent(base::LogLevel::Warn, "event write failed",
                   {{"key", involvedKey(o)},
                    {"reason", pending.reason},
                    {"error", result.error().describe()}});
    if (on_degraded_) on_degraded_("event_write_failed");
    return;
  }
  remember(key, Sent{.event_name = name, .count = 1, .first = pending.at, .last = pending.at});
}

void KubeEventRecorder::remember(const std::string& key, Sent sent) {
  auto existing = sent_.find(key);
  if (existing != sent_.end()) {
    lru_.erase(existing->second.lru);
    sent_.erase(existing);
  }
  lru_.push_front(key);
  sent.lru = lru_.begin();
  sent_.emplace(key, std::move(sent));
  while (sent_.size() > options_.correlation_cache) {
    sent_.erase(lru_.back());
    lru_.pop_back();
  }
}

}  // namespace shardscaler::k8s
