#include "shardscaler/telemetry/warning_limiter.h"

#include <algorithm>
#include <utility>

namespace shardscaler::telemetry {
namespace {

constexpr std::string_view kOverflowKind = "other";

}  // namespace

WarningLimiter::WarningLimiter(std::shared_ptr<const k8s::Clock> clock)
    : WarningLimiter(std::move(clock), Options{}) {}

WarningLimiter::WarningLimiter(std::shared_ptr<const k8s::Clock> clock, Options options)
    : clock_(std::move(clock)), options_(options) {
  if (!clock_) clock_ = std::make_shared<k8s::RealClock>();
  options_.burst = std::max<std::size_t>(options_.burst, 1);
  options_.max_kinds = std::max<std::size_t>(options_.max_kinds, 1);
}

WarningLimiter::Decision WarningLimiter::admit(std::string_view kind) {
  const auto now = clock_->monotonicNow();
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(kind);
  if (it == buckets_.end()) {
    const std::string_view key = buckets_.size() + 1 < options_.max_kinds ? kind : kOverflowKind;
    it = buckets_.find(key);
    if (it == buckets_.end()) {
      it = buckets_
               .emplace(std::string(key),
                        Bucket{.tokens = static_cast<double>(options_.burst), .refilled = now})
               .first;
    }
  }
  Bucket& bucket = it->second;
  if (options_.refill.count() > 0 && now > bucket.refilled) {
    const double earned = std::chrono::duration<double>(now - bucket.refilled) /
                          std::chrono::duration<double>(options_.refill);
    bucket.tokens = std::min(static_cast<double>(options_.burst), bucket.tokens + earned);
  }
  bucket.refilled = now;
  if (bucket.tokens < 1) {
    ++bucket.suppressed;
    return {};
  }
  bucket.tokens -= 1;
  return {.log = true, .suppressed = std::exchange(bucket.suppressed, 0)};
}

}  // namespace shardscaler::telemetry
