// Request parsing of the aggregated API: routes, the authorization attributes the API server would
// give them, the labelSelector parameter and the refusals' metav1.Status.
#include "shardscaler/metrics_api/api_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace shardscaler::metrics_api {
namespace {

using ::testing::HasSubstr;

TEST(ApiRequest, RoutesEveryPathKubectlGetRawReads) {
  EXPECT_EQ(parseApiRequest("GET", "/apis", "")->route, Route::GroupList);
  EXPECT_EQ(parseApiRequest("GET", "/apis/external.metrics.k8s.io", "")->route, Route::Group);
  EXPECT_EQ(parseApiRequest("GET", "/apis/external.metrics.k8s.io/v1beta1", "")->route,
            Route::ResourceList);
  EXPECT_EQ(parseApiRequest("GET", "/apis/external.metrics.k8s.io/v1beta1/", "")->route,
            Route::ResourceList);
  auto openapi = parseApiRequest("GET", "/openapi/v2", "");
  EXPECT_EQ(openapi->route, Route::OpenApiV2);
  EXPECT_EQ(std::get<NonResourceAttributes>(openapi->attributes),
            (NonResourceAttributes{"/openapi/v2", "get"}));
}

TEST(ApiRequest, AMetricIsAListOfANamespacedResource) {
  auto r = parseApiRequest(
      "GET",
      "/apis/external.metrics.k8s.io/v1beta1/namespaces/monitoring/shardscaler_samples_per_second",
      "labelSelector=shardset%3Dmain");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->route, Route::Metric);
  EXPECT_EQ(r->ns, "monitoring");
  EXPECT_EQ(r->metric, MetricKind::SamplesPerSecond);
  EXPECT_EQ(r->selector.pinnedValue("shardset"), "main");
  EXPECT_EQ(std::get<ResourceAttributes>(r->attributes),
            (ResourceAttributes{"monitoring", "list", "external.metrics.k8s.io", "v1beta1",
                                "shardscaler_samples_per_second"}));
}

TEST(ApiRequest, RefusesWhatItDoesNotServeWithTheApiServersReasons) {
  auto post = parseApiRequest("POST", "/apis", "");
  EXPECT_EQ(post.error().status, 405);
  EXPECT_EQ(post.error().reason, "MethodNotAllowed");
  EXPECT_EQ(parseApiRequest("GET", "/apis/custom.metrics.k8s.io", "").error().status, 404);
  EXPECT_EQ(parseApiRequest("GET", "/apis/external.metrics.k8s.io/v1beta2", "").error().status,
            404);
  auto metric =
      parseApiRequest("GET", "/apis/external.metrics.k8s.io/v1beta1/namespaces/monitoring/cpu", "");
  EXPECT_EQ(metric.error().status, 404);
  EXPECT_THAT(metric.error().message, HasSubstr("shardscaler_samples_per_second"));
  EXPECT_EQ(parseApiRequest("GET",
                            "/apis/external.metrics.k8s.io/v1beta1/namespaces/../"
                            "shardscaler_samples_per_second",
                            "")
                .error()
                .status,
            404);
  EXPECT_EQ(parseApiRequest("GET", "/healthz", "").error().status, 404);
  auto bad_selector = parseApiRequest(
      "GET", "/apis/external.metrics.k8s.io/v1beta1/namespaces/m/shardscaler_samples_per_second",
      "labelSelector=shardset+in+%28a");
  EXPECT_EQ(bad_selector.error().status, 400);
  EXPECT_EQ(bad_selector.error().reason, "BadRequest");
}

TEST(ApiRequest, QueryParametersAreFormDecoded) {
  EXPECT_EQ(queryParameter("a=1&labelSelector=shardset+in+%28a%2Cb%29", "labelSelector"),
            "shardset in (a,b)");
  EXPECT_EQ(queryParameter("a=1", "labelSelector"), std::nullopt);
  EXPECT_EQ(queryParameter("labelSelector", "labelSelector"), "");
}

TEST(ApiRequest, StatusReadsLikeTheApiServers) {
  auto status = statusJson({403, "Forbidden", "no"});
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["status"], "Failure");
  EXPECT_EQ(status["code"], 403);
  EXPECT_EQ(status["reason"], "Forbidden");
}

}  // namespace
}  // namespace shardscaler::metrics_api
