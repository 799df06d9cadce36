#include "shardscaler/metrics_api/access_review.h"

#include <algorithm>

#include "shardscaler/base/expected.h"

namespace shardscaler::metrics_api {
namespace {

using Json = nlohmann::json;

}  // namespace

Json subjectAccessReview(const AccessRequest& request) {
  Json spec = {{"user", request.user.name}, {"groups", request.user.groups}};
  if (!request.user.extra.empty()) spec["extra"] = request.user.extra;
  if (const auto* r = std::get_if<ResourceAttributes>(&request.attributes)) {
    spec["resourceAttributes"] = {{"namespace", r->ns},
                                  {"verb", r->verb},
                                  {"group", r->group},
                                  {"version", r->version},
                                  {"resource", r->resource}};
  } else {
    const auto& n = std::get<NonResourceAttributes>(request.attributes);
    spec["nonResourceAttributes"] = {{"path", n.path}, {"verb", n.verb}};
  }
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec", std::move(spec)}};
}

Expected<AccessDecision> accessDecisionOf(const Json& review) {
  auto status = review.find("status");
  if (status == review.end() || !status->is_object()) {
    return std::unexpected("the SubjectAccessReview came back without a status");
  }
  // A field of the wrong type counts as absent: only a boolean true allows.
  const auto boolean = [&](const char* key) {
    auto it = status->find(key);
    return it != status->end() && it->is_boolean() && it->get<bool>();
  };
  const auto text = [&](const char* key) {
    auto it = status->find(key);
    return it != status->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  AccessDecision decision;
  decision.allowed = boolean("allowed") && !boolean("denied");
  decision.reason = text("reason");
  const std::string error = text("evaluationError");
  if (!decision.allowed && !error.empty() && !boolean("denied")) {
    return std::unexpected("the API server could not evaluate the SubjectAccessReview: " + error);
  }
  return decision;
}

std::string forbiddenMessage(const AccessRequest& request, const AccessDecision& decision) {
  std::string message = "User \"" + request.user.name + "\" cannot ";
  if (const auto* r = std::get_if<ResourceAttributes>(&request.attributes)) {
    message += r->verb + " resource \"" + r->resource + "\" in API group \"" + r->group +
               "\" in the namespace \"" + r->ns + "\"";
  } else {
    const auto& n = std::get<NonResourceAttributes>(request.attributes);
    message += n.verb + " path \"" + n.path + "\"";
  }
  if (!decision.reason.empty()) message += ": " + decision.reason;
  return message;
}

std::string AccessDecisionCache::keyOf(const AccessRequest& request) {
  // The review body itself: every field that can change the answer, in a canonical order
  // (nlohmann's object keys are sorted).
  return subjectAccessReview(request)["spec"].dump();
}

std::optional<AccessDecision> AccessDecisionCache::find(const std::string& key, TimePoint now) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  if (now >= it->second.expires) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.decision;
}

void AccessDecisionCache::put(const std::string& key, const AccessDecision& decision,
                              TimePoint now) {
  if (entries_.size() >= options_.max_entries) {
    std::erase_if(entries_, [&](const auto& e) { return now >= e.second.expires; });
    // Still full: a burst of distinct users; forgetting everything costs only reviews.
    if (entries_.size() >= options_.max_entries) entries_.clear();
  }
  const auto ttl = decision.allowed ? options_.allowed_ttl : options_.denied_ttl;
  entries_[key] = {decision, now + ttl};
}

}  // namespace shardscaler::metrics_api
