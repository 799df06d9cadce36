// A token bucket per kind of warning (a guard rule, a server's degraded reason), so that a client
// repeating one bad request cannot flood the log. It never drops the count: a line let through
// after others were held back says how many were, and the metric counts every one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "shardscaler/k8s_client/clock.h"

namespace shardscaler::telemetry {

class WarningLimiter {
 public:
  struct Options {
    // Lines of one kind let through at once, then one per `refill`.
    std::size_t burst = 5;
    std::chrono::milliseconds refill{std::chrono::seconds(10)};
    // Kinds beyond this many share one bucket ("other"): the map stays bounded whatever the keys.
    std::size_t max_kinds = 64;
  };

  // What to do with one warning.
  struct Decision {
    bool log = false;
    // Warnings of this kind held back since the last one logged (only when log is true).
    std::uint64_t suppressed = 0;
  };

  explicit WarningLimiter(std::shared_ptr<const k8s::Clock> clock);
  WarningLimiter(std::shared_ptr<const k8s::Clock> clock, Options options);

  // Thread-safe.
  Decision admit(std::string_view kind);

 private:
  struct Bucket {
    double tokens = 0;
    k8s::Clock::MonotonicTime refilled{};
    std::uint64_t suppressed = 0;
  };

  std::shared_ptr<const k8s::Clock> clock_;
  Options options_;
  std::mutex mutex_;
  std::map<std::string, Bucket, std::less<>> buckets_;
};

}  // namespace shardscaler::telemetry
