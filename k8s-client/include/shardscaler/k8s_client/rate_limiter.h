// How long a work-queue key waits before its next retry: per-key backoff, an overall token
// bucket, or the stricter of several. Limiters only compute delays; they never sleep.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::k8s {

// Thread-safety: implementations are safe to call from any thread.
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Records one more retry of `key` and returns how long it should wait.
  virtual std::chrono::nanoseconds when(const std::string& key) = 0;
  // The key succeeded: its failure history is cleared.
  virtual void forget(const std::string& key) = 0;
  // Retries recorded for `key` since the last forget().
  virtual int numRequeues(const std::string& key) const = 0;
};

// The longest delay any of its limiters asks for; requeues are counted by the first limiter
// that counts them (the maximum over all).
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  std::chrono::nanoseconds when(const std::string& key) override;
  void forget(const std::string& key) override;
  int numRequeues(const std::string& key) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: max of per-key exponential backoff
// (5 ms doubling up to 1000 s) and an overall token bucket of 10 qps with a burst of 100.
std::unique_ptr<RateLimiter> defaultControllerRateLimiter(const Clock& clock);

}  // namespace shardscaler::k8s
