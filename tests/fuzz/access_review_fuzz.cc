// libFuzzer target: SubjectAccessReview answers as the API server (or whatever answers in its
// place) returns them, and the Forbidden message made from them. Only a boolean `allowed` true
// without `denied` may allow. Input parts (fuzz_input.h): the review (JSON), then the user name
// and path the message names.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/metrics_api/access_review.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace fuzz = shardscaler::fuzz;
  namespace api = shardscaler::metrics_api;
  const auto p = fuzz::parts(fuzz::text(data, size), 3);
  const nlohmann::json review = fuzz::json(p[0]);
  if (review.is_discarded()) return 0;
  auto decision = api::accessDecisionOf(review);
  if (!decision) return 0;
  // authenticate() admits only UTF-8 user names (they go into JSON), and so does this target.
  const auto utf8 = [](std::string_view s) {
    try {
      (void)nlohmann::json(std::string(s)).dump();
      return true;
    } catch (const nlohmann::json::type_error&) {
      return false;
    }
  };
  if (!utf8(p[1]) || !utf8(p[2])) return 0;
  const nlohmann::json* status =
      review.is_object() && review.contains("status") ? &review["status"] : nullptr;
  if (decision->allowed) {
    const bool allowed = status != nullptr && status->is_object() &&
                         status->value("allowed", nlohmann::json()) == true &&
                         status->value("denied", nlohmann::json()) != true;
    if (!allowed) __builtin_trap();
  }
  const api::AccessRequest request{
      api::UserInfo{.name = std::string(p[1]), .groups = {"system:authenticated"}, .extra = {}},
      api::ResourceAttributes{std::string(p[2]), "list", "external.metrics.k8s.io", "v1beta1",
                              "shardscaler_samples_per_second"}};
  (void)api::forbiddenMessage(request, *decision);
  api::AccessDecisionCache cache;
  const std::string key = api::AccessDecisionCache::keyOf(request);
  cache.put(key, *decision, {});
  if (cache.find(key, {})->allowed != decision->allowed) __builtin_trap();
  return 0;
}
