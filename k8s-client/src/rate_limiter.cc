#include "shardscaler/k8s_client/rate_limiter.h"

#include <algorithm>
#include <utility>

#include "shardscaler/k8s_client/item_exponential_rate_limiter.h"
#include "shardscaler/k8s_client/token_bucket_rate_limiter.h"

namespace shardscaler::k8s {

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

std::chrono::nanoseconds MaxOfRateLimiter::when(const std::string& key) {
  std::chrono::nanoseconds longest{};
  // Every limiter must record the retry, not just the one that wins.
  for (auto& limiter : limiters_) longest = std::max(longest, limiter->when(key));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& key) {
  for (auto& limiter : limiters_) limiter->forget(key);
}

int MaxOfRateLimiter::numRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->numRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> defaultControllerRateLimiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5),
                                                                  std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<TokenBucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace shardscaler::k8s
