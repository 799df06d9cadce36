// What the informer, reflector, store and leader-elector tests share besides the
// k8s_testing::FakeKubeClient they run against: a log of what handlers saw, and a test object.
// Unit tests only; the log waits on real time only, bounded, for another thread's handler.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"
#include "shardscaler/test_kit/eventually.h"

namespace shardscaler::k8s::cachetest {

// A thread-safe log of strings that tests wait on (bounded, real time).
class EventLog {
 public:
  void push(std::string entry) {
    {
      std::lock_guard lock(mutex_);
      entries_.push_back(std::move(entry));
    }
    cv_.notify_all();
  }
  bool awaitSize(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return entries_.size() >= n; });
  }
  std::vector<std::string> entries() const {
    std::lock_guard lock(mutex_);
    return entries_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> entries_;
};

// Waits (bounded) until `fake` has been asked for at least `n` watches and one is open, having
// handed out every change made so far: a change made after this reaches that watch.
inline bool awaitOpenWatch(const testing::FakeKubeClient& fake, std::size_t n) {
  return test_kit::eventually(std::chrono::seconds(5), [&] {
    return fake.calls({.verb = testing::Verb::Watch}).size() >= n &&
           fake.awaitWatchesDelivered(1, std::chrono::milliseconds(0));
  });
}

// The fake's resourceVersion `writes` writes after `base` (a currentResourceVersion()).
inline std::string resourceVersionAfter(const std::string& base, int writes) {
  return std::to_string(std::stoll(base) + writes);
}

inline Json makeObject(const std::string& ns, const std::string& name, Json labels = nullptr,
                       Json spec = Json::object()) {
  Json object{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"namespace", ns}, {"name", name}}},
              {"spec", std::move(spec)}};
  if (!labels.is_null()) object["metadata"]["labels"] = std::move(labels);
  return object;
}

}  // namespace shardscaler::k8s::cachetest
