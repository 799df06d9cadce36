#include "shardscaler/k8s_client/token_bucket_rate_limiter.h"

#include <algorithm>
#include <stdexcept>

namespace shardscaler::k8s {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, const Clock& clock)
    : qps_(qps),
      burst_(static_cast<double>(burst)),
      clock_(clock),
      tokens_(static_cast<double>(burst)),
      last_(clock.monotonicNow()) {
  if (qps <= 0 || burst <= 0) {
    throw std::invalid_argument("token bucket needs qps > 0 and burst > 0");
  }
}

std::chrono::nanoseconds TokenBucketRateLimiter::when(const std::string& /*key*/) {
  std::lock_guard lock(mutex_);
  auto now = clock_.monotonicNow();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0) return std::chrono::nanoseconds::zero();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

}  // namespace shardscaler::k8s
