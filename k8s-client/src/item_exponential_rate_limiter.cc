#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"

#include <cmath>

namespace shardscaler::k8s {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(std::chrono::nanoseconds base,
                                                       std::chrono::nanoseconds max)
    : base_(base), max_(max) {}

std::chrono::nanoseconds ItemExponentialRateLimiter::when(const std::string& key) {
  int exponent = 0;
  {
    std::lock_guard lock(mutex_);
    exponent = failures_[key]++;
  }
  // In floating point: 2^exponent overflows any integer long before the cap stops mattering.
  double delay = static_cast<double>(base_.count()) * std::pow(2.0, exponent);
  if (!(delay < static_cast<double>(max_.count()))) return max_;
  return std::chrono::nanoseconds(static_cast<std::chrono::nanoseconds::rep>(delay));
}

void ItemExponentialRateLimiter::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int ItemExponentialRateLimiter::numRequeues(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

}  // namespace shardscaler::k8s
