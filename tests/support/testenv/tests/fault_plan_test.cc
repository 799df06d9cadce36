// Unit tests of the API fault proxy's pure parts: how a request is read (Kubernetes verb,
// resource, name), which fault the plan picks (rates, verb and path filters, one seeded RNG),
// and that its answers decode in shardscaler's client as the errors the API server would give.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <vector>

#include "fault_answer.h"
#include "fault_plan.h"
#include "request_info.h"
#include "shardscaler/k8s_client/api_status.h"

namespace shardscaler::testenv::control_plane_detail {
namespace {

using namespace std::chrono_literals;

TEST(ApiRequestTest, VerbsResourcesAndNamesAreReadAsTheApiServerReadsThem) {
  struct Case {
    const char* method;
    const char* target;
    const char* verb;
    const char* ns;
    const char* resource;
    const char* name;
    const char* subresource;
  };
  const std::vector<Case> cases = {
      {"GET", "/api/v1/namespaces/mon/pods", "list", "mon", "pods", "", ""},
      {"GET", "/api/v1/namespaces/mon/pods/p-0", "get", "mon", "pods", "p-0", ""},
      {"GET", "/apis/apps/v1/namespaces/mon/statefulsets?watch=true&resourceVersion=5", "watch",
       "mon", "statefulsets", "", ""},
      {"GET", "/apis/apps/v1/namespaces/mon/statefulsets?labelSelector=a&watch=1", "watch", "mon",
       "statefulsets", "", ""},
      {"GET", "/apis/apps/v1/namespaces/mon/statefulsets?watch=false", "list", "mon",
       "statefulsets", "", ""},
      {"GET", "/api/v1/watch/namespaces/mon/configmaps", "watch", "mon", "configmaps", "", ""},
      {"POST", "/apis/apps/v1/namespaces/mon/statefulsets", "create", "mon", "statefulsets", "",
       ""},
      {"PUT", "/apis/monitoring.coreos.com/v1/namespaces/mon/prometheuses/main/status", "update",
       "mon", "prometheuses", "main", "status"},
      {"PATCH", "/apis/apps/v1/namespaces/mon/statefulsets/prometheus-main", "patch", "mon",
       "statefulsets", "prometheus-main", ""},
      {"DELETE", "/apis/apps/v1/namespaces/mon/statefulsets/prometheus-main", "delete", "mon",
       "statefulsets", "prometheus-main", ""},
      {"DELETE", "/api/v1/namespaces/mon/configmaps", "deletecollection", "mon", "configmaps", "",
       ""},
      {"GET", "/api/v1/namespaces", "list", "", "namespaces", "", ""},
      {"GET", "/api/v1/namespaces/mon", "get", "mon", "namespaces", "mon", ""},
      {"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y", "get", "",
       "customresourcedefinitions", "x.y", ""},
      {"GET", "/version", "get", "", "", "", ""},
      {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "create", "",
       "selfsubjectaccessreviews", "", ""},
  };
  for (const auto& c : cases) {
    const auto request = classifyApiRequest(c.method, c.target);
    EXPECT_EQ(request.verb, c.verb) << c.method << " " << c.target;
    EXPECT_EQ(request.ns, c.ns) << c.target;
    EXPECT_EQ(request.resource, c.resource) << c.target;
    EXPECT_EQ(request.name, c.name) << c.target;
    EXPECT_EQ(request.subresource, c.subresource) << c.target;
    EXPECT_EQ(request.path.find('?'), std::string::npos) << c.target;
  }
  EXPECT_FALSE(classifyApiRequest("GET", "/readyz").resource_request);
  EXPECT_TRUE(classifyApiRequest("PATCH", "/api/v1/namespaces/a/pods/p").isWrite());
  EXPECT_FALSE(classifyApiRequest("GET", "/api/v1/namespaces/a/pods?watch=1").isWrite());
}

const RequestInfo kPatch =
    classifyApiRequest("PATCH", "/apis/apps/v1/namespaces/mon/statefulsets/prometheus-main");
const RequestInfo kGet = classifyApiRequest("GET", "/apis/apps/v1/namespaces/mon/statefulsets/a");
const RequestInfo kWatch =
    classifyApiRequest("GET", "/apis/apps/v1/namespaces/mon/statefulsets?watch=true");
const RequestInfo kSecrets = classifyApiRequest("GET", "/api/v1/namespaces/mon/secrets");

TEST(FaultPlanTest, OffUntilSetAndOffAgainWhenDisabled) {
  FaultPlan plan(1);
  EXPECT_TRUE(plan.decide(kPatch).clean());
  plan.set(ApiFaultRates{.server_error = 1.0});
  EXPECT_EQ(plan.decide(kPatch).refusal, ApiFault::ServerError);
  plan.disable();
  EXPECT_TRUE(plan.decide(kPatch).clean());
}

TEST(FaultPlanTest, ConflictOnlyRefusesWritesAndCutOnlyHitsWatches) {
  FaultPlan plan(1);
  plan.set(ApiFaultRates{
      .conflict = 1.0, .cut_watch = 1.0, .cut_after_min = 250ms, .cut_after_max = 250ms});
  EXPECT_EQ(plan.decide(kPatch).refusal, ApiFault::Conflict);
  EXPECT_TRUE(plan.decide(kGet).clean());
  const auto watch = plan.decide(kWatch);
  EXPECT_FALSE(watch.refusal);
  EXPECT_EQ(watch.cut_after, 250ms);
}

TEST(FaultPlanTest, TooManyRequestsAndLatencyApplyToAnyVerb) {
  FaultPlan plan(1);
  plan.set(ApiFaultRates{
      .too_many_requests = 1.0, .latency = 1.0, .latency_min = 40ms, .latency_max = 40ms});
  for (const auto& request : {kPatch, kGet, kWatch}) {
    const auto decision = plan.decide(request);
    EXPECT_EQ(decision.refusal, ApiFault::TooManyRequests) << request.verb;
    EXPECT_EQ(decision.latency, 40ms) << request.verb;
  }
}

TEST(FaultPlanTest, VerbAndPathFiltersLeaveOtherRequestsClean) {
  FaultPlan plan(1);
  plan.set(ApiFaultRates{
      .server_error = 1.0, .verbs = {"patch", "get"}, .path_regex = "/statefulsets(/|$)"});
  EXPECT_EQ(plan.decide(kPatch).refusal, ApiFault::ServerError);
  EXPECT_EQ(plan.decide(kGet).refusal, ApiFault::ServerError);
  EXPECT_TRUE(plan.decide(kWatch).clean());    // verb not listed
  EXPECT_TRUE(plan.decide(kSecrets).clean());  // path does not match (nor the verb "list")
  plan.set(ApiFaultRates{.server_error = 1.0, .path_regex = "/secrets$"});
  EXPECT_EQ(plan.decide(kSecrets).refusal, ApiFault::ServerError);
  EXPECT_TRUE(plan.decide(kGet).clean());
}

TEST(FaultPlanTest, OneSeedGivesOneSequenceAndRatesAreRoughlyKept) {
  const ApiFaultRates rates{.server_error = 0.2, .conflict = 0.3, .too_many_requests = 0.1};
  FaultPlan a(42), b(42), c(43);
  a.set(rates);
  b.set(rates);
  c.set(rates);
  std::vector<int> seq_a, seq_b, seq_c;
  int refused = 0;
  constexpr int kDraws = 4000;
  for (int i = 0; i < kDraws; ++i) {
    auto code = [](const FaultDecision& d) {
      return d.refusal ? static_cast<int>(*d.refusal) : -1;
    };
    seq_a.push_back(code(a.decide(kPatch)));
    seq_b.push_back(code(b.decide(kPatch)));
    seq_c.push_back(code(c.decide(kPatch)));
    refused += seq_a.back() >= 0 ? 1 : 0;
  }
  EXPECT_EQ(seq_a, seq_b);
  EXPECT_NE(seq_a, seq_c);
  // P(refused) = 1 - 0.8 * 0.7 * 0.9 = 0.496; 4000 draws keep within +-0.05 far beyond 6 sigma.
  EXPECT_NEAR(static_cast<double>(refused) / kDraws, 0.496, 0.05);
}

TEST(FaultPlanTest, BadRatesAreRefusedWithTheFieldNamed) {
  FaultPlan plan(1);
  auto message = [&](const ApiFaultRates& rates) {
    try {
      plan.set(rates);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message({.conflict = 1.5}), ::testing::HasSubstr("conflict must be a probability"));
  EXPECT_THAT(message({.server_error = -0.1}), ::testing::HasSubstr("server_error"));
  EXPECT_THAT(message({.cut_after_min = 500ms, .cut_after_max = 100ms}),
              ::testing::HasSubstr("cut_after"));
  EXPECT_THAT(message({.path_regex = "(unclosed"}), ::testing::HasSubstr("is not a regex"));
  EXPECT_TRUE(plan.decide(kPatch).clean());  // a refused set leaves the plan as it was
}

TEST(FaultAnswerTest, AnswersDecodeInTheClientAsTheApiServersOwn) {
  auto decode = [](const FaultAnswer& a) {
    return k8s::errorFromResponse(a.status, a.body,
                                  a.retry_after_seconds
                                      ? std::optional(std::chrono::seconds(*a.retry_after_seconds))
                                      : std::nullopt,
                                  "test request");
  };
  const auto conflict = decode(faultAnswer(ApiFault::Conflict, kPatch));
  EXPECT_EQ(conflict.kind, k8s::ErrorKind::Conflict);
  EXPECT_EQ(conflict.reason, "Conflict");
  EXPECT_THAT(conflict.message,
              ::testing::HasSubstr("Operation cannot be fulfilled on statefulsets.apps "
                                   "\"prometheus-main\": the object has been modified"));
  const auto throttled = decode(faultAnswer(ApiFault::TooManyRequests, kPatch));
  EXPECT_EQ(throttled.kind, k8s::ErrorKind::TooManyRequests);
  EXPECT_EQ(throttled.retry_after, std::chrono::seconds(1));
  // The Status alone carries it too (details.retryAfterSeconds), as the API server sends it.
  const auto body_only = k8s::errorFromResponse(
      429, faultAnswer(ApiFault::TooManyRequests, kGet).body, std::nullopt, "test request");
  EXPECT_EQ(body_only.retry_after, std::chrono::seconds(1));
  const auto internal = decode(faultAnswer(ApiFault::ServerError, kGet));
  EXPECT_EQ(internal.kind, k8s::ErrorKind::ServerError);
  EXPECT_EQ(internal.http_status, 500);
  EXPECT_THROW(faultAnswer(ApiFault::CutWatch, kWatch), std::invalid_argument);
}

}  // namespace
}  // namespace shardscaler::testenv::control_plane_detail
