// Jittered exponential backoff for reconnect loops (watch, list), bounded at both ends.
// It only computes delays; it never sleeps or reads anything but the Clock it is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::k8s {

struct BackoffOptions {
  std::chrono::nanoseconds initial = std::chrono::milliseconds(800);
  std::chrono::nanoseconds max = std::chrono::seconds(30);  // no delay is ever longer
  double factor = 2.0;
  // A delay is drawn uniformly from [base, base * (1 + jitter)], then capped at max.
  double jitter = 1.0;
  // After this long without a backoff the next one starts again from `initial`.
  std::chrono::nanoseconds reset_after = std::chrono::minutes(2);
};

// Thread-safety: none; one owner (a reflector's loop thread) calls it.
class ExponentialBackoff {
 public:
  ExponentialBackoff(BackoffOptions options, const Clock& clock,
                     std::uint64_t seed = std::random_device{}());

  // The delay to wait now; each call without a reset doubles the base (up to max).
  std::chrono::nanoseconds next();
  void reset();

 private:
  BackoffOptions options_;
  const Clock& clock_;
  std::mt19937_64 random_;
  std::chrono::nanoseconds base_;
  bool used_ = false;
  Clock::MonotonicTime last_;
};

}  // namespace shardscaler::k8s
