// The external metrics API behind the real aggregator (see metrics_api_aggregation.h): discovery
// and metric values through `kubectl get --raw`, the fail-safe error, and who is believed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics_api_aggregation.h"

namespace shardscaler::metrics_api::aggregation {
namespace {

using ::testing::HasSubstr;

class MetricsApiAggregationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { startAggregation(); }
  static void TearDownTestSuite() { stopAggregation(); }
};

constexpr const char* kMetric =
    "/apis/external.metrics.k8s.io/v1beta1/namespaces/monitoring/shardscaler_samples_per_second";

TEST_F(MetricsApiAggregationTest, KubectlReadsDiscoveryAndTheMetricThroughTheAggregator) {
  std::string out, err;
  ASSERT_EQ(raw("/apis/external.metrics.k8s.io/v1beta1", &out, &err), 0) << err;
  json resources = json::parse(out);
  EXPECT_EQ(resources["kind"], "APIResourceList");
  EXPECT_EQ(resources["resources"].size(), 3);
  ASSERT_EQ(raw("/apis/external.metrics.k8s.io", &out, &err), 0) << err;
  EXPECT_EQ(json::parse(out)["preferredVersion"]["version"], "v1beta1");

  putShardSet("main", rfc3339(std::chrono::system_clock::now()));
  ASSERT_EQ(raw(std::string(kMetric) + "?labelSelector=shardset%3Dmain", &out, &err), 0) << err;
  json list = json::parse(out);
  ASSERT_EQ(list["items"].size(), 1) << out;
  EXPECT_EQ(list["items"][0]["value"], "1999750m");
  EXPECT_EQ(list["items"][0]["metricLabels"]["shardset"], "main");
}

TEST_F(MetricsApiAggregationTest, StaleRatesReachKubectlAsAnErrorNotAValue) {
  putShardSet("stale", rfc3339(std::chrono::system_clock::now() - 10min));
  std::string out, err;
  EXPECT_NE(raw(std::string(kMetric) + "?labelSelector=shardset%3Dstale", &out, &err), 0) << out;
  EXPECT_THAT(err, HasSubstr("older than 90s"));
}

TEST_F(MetricsApiAggregationTest, OnlyTheFrontProxyIsBelievedAndTheApiServerAuthorizes) {
  // No certificate, though the headers claim system:masters: 401.
  auto anonymous = direct("/apis/external.metrics.k8s.io/v1beta1", nullptr,
                          {"X-Remote-User: admin", "X-Remote-Group: system:masters"});
  ASSERT_EQ(anonymous.code, CURLE_OK) << anonymous.error;
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_THAT(anonymous.body, HasSubstr("front proxy"));
  // A certificate of another CA, with the allowed name: 401.
  const auto other_ca = makeCa("not-the-front-proxy");
  const auto forged = certificates::testing::issueClientCertificate(other_ca, "front-proxy-client");
  EXPECT_EQ(direct("/apis/external.metrics.k8s.io/v1beta1", &forged,
                   {"X-Remote-User: admin", "X-Remote-Group: system:masters"})
                .status,
            401);
  // The front proxy's CA, but a name not among requestheader-allowed-names: 401.
  const auto unnamed =
      certificates::testing::issueClientCertificate(env->front_proxy_ca, "someone");
  EXPECT_EQ(direct("/apis/external.metrics.k8s.io/v1beta1", &unnamed,
                   {"X-Remote-User: admin", "X-Remote-Group: system:masters"})
                .status,
            401);
  // The real front proxy certificate naming a user RBAC does not allow: the SubjectAccessReview
  // says no, 403.
  auto denied = direct(std::string(kMetric) + "?labelSelector=shardset%3Dmain", &env->proxy_client,
                       {"X-Remote-User: nobody"});
  EXPECT_EQ(denied.status, 403) << denied.body;
  EXPECT_THAT(denied.body, HasSubstr("User \\\"nobody\\\" cannot list resource"));
  // And through the API server, a user without RBAC is refused before the request reaches us.
  const auto kubeconfig =
      env->control_plane->writeKubeconfig("user0", env->control_plane->userToken(1));
  std::string out, err;
  EXPECT_NE(env->control_plane->kubectl(
                "--kubeconfig=" + kubeconfig.string() + " get --raw '" + std::string(kMetric) + "'",
                &out, &err),
            0);
  EXPECT_THAT(err, HasSubstr("Forbidden"));
}

}  // namespace
}  // namespace shardscaler::metrics_api::aggregation
