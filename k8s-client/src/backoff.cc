#include "shardscaler/k8s_client/backoff.h"

#include <algorithm>

namespace shardscaler::k8s {

ExponentialBackoff::ExponentialBackoff(BackoffOptions options, const Clock& clock,
                                       std::uint64_t seed)
    : options_(options), clock_(clock), random_(seed), base_(options.initial) {}

std::chrono::nanoseconds ExponentialBackoff::next() {
  auto now = clock_.monotonicNow();
  if (!used_ || now - last_ > options_.reset_after) {
    base_ = options_.initial;
  } else {
    auto grown = std::chrono::duration<double, std::nano>(base_) * options_.factor;
    base_ = grown >= std::chrono::duration<double, std::nano>(options_.max)
                ? options_.max
                : std::chrono::duration_cast<std::chrono::nanoseconds>(grown);
  }
  used_ = true;
  last_ = now;
  std::uniform_real_distribution<double> spread(0.0, options_.jitter);
  auto jittered = std::chrono::duration<double, std::nano>(base_) * (1.0 + spread(random_));
  auto delay = std::chrono::duration_cast<std::chrono::nanoseconds>(jittered);
  return std::clamp(delay, std::chrono::nanoseconds::zero(), options_.max);
}

void ExponentialBackoff::reset() {
  used_ = false;
  base_ = options_.initial;
}

}  // namespace shardscaler::k8s
