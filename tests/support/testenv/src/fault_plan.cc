#include "fault_plan.h"

#include <stdexcept>
#include <string>

namespace shardscaler::testenv::control_plane_detail {

namespace {

void checkRate(const char* name, double rate) {
  if (!(rate >= 0.0 && rate <= 1.0)) {
    throw std::invalid_argument(std::string("ApiFaultRates.") + name +
                                " must be a probability in 0..1, not " + std::to_string(rate));
  }
}

void checkRange(const char* name, std::chrono::milliseconds min, std::chrono::milliseconds max) {
  if (min.count() < 0 || min > max) {
    throw std::invalid_argument(std::string("ApiFaultRates.") + name +
                                ": need 0 <= min <= max, not " + std::to_string(min.count()) +
                                "ms.." + std::to_string(max.count()) + "ms");
  }
}

}  // namespace

void FaultPlan::set(const ApiFaultRates& rates) {
  checkRate("server_error", rates.server_error);
  checkRate("conflict", rates.conflict);
  checkRate("too_many_requests", rates.too_many_requests);
  checkRate("cut_watch", rates.cut_watch);
  checkRate("latency", rates.latency);
  checkRange("cut_after", rates.cut_after_min, rates.cut_after_max);
  checkRange("latency", rates.latency_min, rates.latency_max);
  std::optional<std::regex> path_regex;
  if (!rates.path_regex.empty()) {
    try {
      path_regex.emplace(rates.path_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("ApiFaultRates.path_regex \"" + rates.path_regex +
                                  "\" is not a regex: " + e.what());
    }
  }
  std::lock_guard lock(mutex_);
  rates_ = rates;
  path_regex_ = std::move(path_regex);
  enabled_ = true;
}

void FaultPlan::disable() {
  std::lock_guard lock(mutex_);
  enabled_ = false;
  rates_ = ApiFaultRates{};
  path_regex_.reset();
}

ApiFaultRates FaultPlan::rates() const {
  std::lock_guard lock(mutex_);
  return rates_;
}

FaultDecision FaultPlan::decide(const RequestInfo& request) {
  std::lock_guard lock(mutex_);
  FaultDecision decision;
  if (!enabled_) return decision;
  if (!rates_.verbs.empty() && !rates_.verbs.contains(request.verb)) return decision;
  if (path_regex_ && !std::regex_search(request.path, *path_regex_)) return decision;

  if (draw(rates_.latency)) decision.latency = between(rates_.latency_min, rates_.latency_max);
  if (draw(rates_.server_error)) {
    decision.refusal = ApiFault::ServerError;
  } else if (request.isWrite() && draw(rates_.conflict)) {
    decision.refusal = ApiFault::Conflict;
  } else if (draw(rates_.too_many_requests)) {
    decision.refusal = ApiFault::TooManyRequests;
  } else if (request.isWatch() && draw(rates_.cut_watch)) {
    decision.cut_after = between(rates_.cut_after_min, rates_.cut_after_max);
  }
  return decision;
}

bool FaultPlan::draw(double probability) {
  if (probability <= 0.0) return false;  // no draw: a zero rate does not shift the sequence
  if (probability >= 1.0) return true;
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < probability;
}

std::chrono::milliseconds FaultPlan::between(std::chrono::milliseconds min,
                                             std::chrono::milliseconds max) {
  return std::chrono::milliseconds(std::uniform_int_distribution<std::chrono::milliseconds::rep>(
      min.count(), max.count())(rng_));
}

}  // namespace shardscaler::testenv::control_plane_detail
