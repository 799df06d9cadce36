// Delegated authorization: the SubjectAccessReview (authorization.k8s.io/v1) that asks the API
// server whether a user may make a request, its answer, and a short-lived cache of answers. Pure.
// Must never turn a review that did not answer "allowed" into an allowed request.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/metrics_api/api_request.h"
#include "shardscaler/metrics_api/front_proxy.h"

namespace shardscaler::metrics_api {

struct AccessRequest {
  UserInfo user;
  Attributes attributes;
};

// The SubjectAccessReview to create for `request` (spec.user, groups, extra and the resource or
// non-resource attributes).
nlohmann::json subjectAccessReview(const AccessRequest& request);

struct AccessDecision {
  bool allowed = false;
  // status.reason of the review; for a denial, what the Forbidden message adds.
  std::string reason;
};

// status.allowed of a created review; a review with status.evaluationError and no allow is an
// error (the caller answers 500 rather than pretending to know), as is one without a status.
Expected<AccessDecision> accessDecisionOf(const nlohmann::json& review);

// "User \"u\" cannot list resource \"m\" in API group \"g\" in the namespace \"ns\"" / "cannot
// get path \"/p\"", as the API server's Forbidden messages read.
std::string forbiddenMessage(const AccessRequest& request, const AccessDecision& decision);

// The answers of recent reviews, keyed by everything the review asked about. apiserver's
// delegating authorizer keeps answers 10 s (allowed) and 10 s (denied) by default, which bounds
// how late a revoked permission takes effect here too.
class AccessDecisionCache {
 public:
  struct Options {
    std::chrono::nanoseconds allowed_ttl = std::chrono::seconds(10);
    std::chrono::nanoseconds denied_ttl = std::chrono::seconds(10);
    std::size_t max_entries = 4096;
  };
  using TimePoint = std::chrono::steady_clock::time_point;

  AccessDecisionCache() : AccessDecisionCache(Options{}) {}
  explicit AccessDecisionCache(Options options) : options_(options) {}

  static std::string keyOf(const AccessRequest& request);
  std::optional<AccessDecision> find(const std::string& key, TimePoint now);
  void put(const std::string& key, const AccessDecision& decision, TimePoint now);
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    AccessDecision decision;
    TimePoint expires;
  };
  Options options_;
  std::map<std::string, Entry> entries_;
};

}  // namespace shardscaler::metrics_api
