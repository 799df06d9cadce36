// An overall retry budget for a work queue: a token bucket refilled at qps, holding at most
// burst tokens (golang.org/x/time/rate semantics). It never sleeps; it says how long to wait.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/rate_limiter.h"

namespace shardscaler::k8s {

// Each when() takes a token, borrowing from the future when the bucket is empty, so
// successive delays grow by 1/qps. Keys are ignored; numRequeues() is always 0.
// Thread-safety: any thread.
class TokenBucketRateLimiter final : public RateLimiter {
 public:
  TokenBucketRateLimiter(double qps, int burst, const Clock& clock);
  std::chrono::nanoseconds when(const std::string& key) override;
  void forget(const std::string& /*key*/) override {}
  int numRequeues(const std::string& /*key*/) const override { return 0; }

 private:
  double qps_;
  double burst_;
  const Clock& clock_;
  std::mutex mutex_;
  double tokens_;
  Clock::MonotonicTime last_;
};

}  // namespace shardscaler::k8s
