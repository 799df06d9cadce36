// What the API server said about one namespace's StatefulSets and Prometheus targets, in the order
// etcd wrote it, read by a client of its own straight from the API server. It never goes through a
// fault proxy and never writes, so a property test judges by what really happened.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"

namespace shardscaler::k8s {
class RestClient;
}

namespace shardscaler::e2e {

using k8s::Json;

enum class HistoryKind { StatefulSet, Target };

struct HistoryEvent {
  // metadata.resourceVersion: etcd's revision, one order for both kinds (one etcd holds both; a
  // DELETED event carries the revision of the deletion).
  std::uint64_t revision = 0;
  std::chrono::steady_clock::time_point seen;  // when the recorder read it
  std::chrono::system_clock::time_point seen_wall;
  HistoryKind kind = HistoryKind::StatefulSet;
  k8s::WatchEventType type = k8s::WatchEventType::Added;  // Added, Modified or Deleted
  // Made up after a watch could not resume (410 Gone) by comparing a new list with what was
  // known: the change happened somewhere in the gap.
  bool from_relist = false;
  Json object;
};

class ShardHistory {
 public:
  // Lists and starts watching StatefulSets and prometheuses.monitoring.coreos.com in `ns`; returns
  // once both lists are in (throws std::runtime_error when they are not within 30 s).
  explicit ShardHistory(std::string ns);
  ~ShardHistory();  // stop()
  ShardHistory(const ShardHistory&) = delete;
  ShardHistory& operator=(const ShardHistory&) = delete;

  // Ends both watches (within about a second). Idempotent.
  void stop();
  // Every event so far, ordered by revision.
  std::vector<HistoryEvent> events() const;
  // Watch errors the recorder met and recovered from, one line each.
  std::vector<std::string> notes() const;

 private:
  void record(const k8s::Resource& resource, HistoryKind kind);
  void append(HistoryEvent event);

  std::string ns_;
  std::unique_ptr<k8s::RestClient> client_;
  std::atomic<bool> stop_{false};
  std::atomic<int> listed_{0};
  mutable std::mutex mutex_;
  std::vector<HistoryEvent> events_;
  std::vector<std::string> notes_;
  std::vector<std::thread> threads_;
};

// The object's metadata.resourceVersion as a number (0 when absent or not a number).
std::uint64_t revisionOf(const Json& object);

}  // namespace shardscaler::e2e
