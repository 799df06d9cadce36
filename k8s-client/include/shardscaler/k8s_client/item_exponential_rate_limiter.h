// Per-key exponential backoff for work-queue retries: base * 2^failures, capped at max.
// It keeps one counter per failing key and forgets it on success; it never sleeps.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "shardscaler/k8s_client/rate_limiter.h"

namespace shardscaler::k8s {

// Thread-safety: any thread.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(std::chrono::nanoseconds base = std::chrono::milliseconds(5),
                             std::chrono::nanoseconds max = std::chrono::seconds(1000));
  std::chrono::nanoseconds when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

 private:
  std::chrono::nanoseconds base_;
  std::chrono::nanoseconds max_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, int> failures_;
};

}  // namespace shardscaler::k8s
