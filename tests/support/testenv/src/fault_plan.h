// Which fault, if any, the API fault proxy injects into one request: the rates the test set,
// the verb and path filter, and one seeded RNG for every draw. Pure decisions; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <regex>

#include "request_info.h"
#include "shardscaler/testenv/api_fault_proxy.h"

namespace shardscaler::testenv::control_plane_detail {

struct FaultDecision {
  // ServerError, Conflict or TooManyRequests: answer with it instead of forwarding.
  std::optional<ApiFault> refusal;
  std::optional<std::chrono::milliseconds> latency;    // hold this long first
  std::optional<std::chrono::milliseconds> cut_after;  // a watch: cut it this long after start

  bool clean() const { return !refusal && !latency && !cut_after; }
};

// Thread-safety: every method may be called from any thread.
class FaultPlan {
 public:
  explicit FaultPlan(std::uint64_t seed) : rng_(seed) {}

  // Throws std::invalid_argument for a rate outside 0..1, a min above its max, or a bad regex.
  void set(const ApiFaultRates& rates);
  void disable();
  ApiFaultRates rates() const;

  FaultDecision decide(const RequestInfo& request);

 private:
  bool draw(double probability);  // mutex_ held
  std::chrono::milliseconds between(std::chrono::milliseconds min,
                                    std::chrono::milliseconds max);  // mutex_ held

  mutable std::mutex mutex_;
  bool enabled_ = false;
  ApiFaultRates rates_;
  std::optional<std::regex> path_regex_;
  std::mt19937_64 rng_;
};

}  // namespace shardscaler::testenv::control_plane_detail
