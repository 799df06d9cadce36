// Who a request comes from (the front proxy's certificate, then its headers), the delegated
// authorization, the APIService's owner and the discovery documents.
#include "shardscaler/metrics_api/front_proxy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shardscaler/metrics_api/access_review.h"
#include "shardscaler/metrics_api/api_service_state.h"
#include "shardscaler/metrics_api/discovery.h"

#include "../certificates/tls_test_support.h"

namespace shardscaler::metrics_api {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string& caPem() {
  static const std::string pem =
      certificates::testing::makeTestPki("front-proxy-ca").ca.certificate().pem();
  return pem;
}

json configMap(const std::string& version = "7") {
  return {{"metadata",
           {{"namespace", "kube-system"},
            {"name", "extension-apiserver-authentication"},
            {"resourceVersion", version}}},
          {"data",
           {{"requestheader-client-ca-file", caPem()},
            {"requestheader-allowed-names", "[\"front-proxy-client\"]"},
            {"requestheader-username-headers", "[\"X-Remote-User\"]"},
            {"requestheader-group-headers", "[\"X-Remote-Group\"]"},
            {"requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]"}}}};
}

RequestHeaderConfig config() { return requestHeaderConfigFromConfigMap(configMap()).value(); }

serving::PeerCertificate proxy(const std::string& cn = "front-proxy-client") {
  serving::PeerCertificate peer;
  peer.verified = true;
  peer.subject_common_name = cn;
  return peer;
}

const serving::HeaderList kHeaders = {{"x-remote-user", "system:serviceaccount:kube-system:hpa"},
                                      {"X-Remote-Group", "system:serviceaccounts"},
                                      {"X-Remote-Group", "system:serviceaccounts:kube-system"},
                                      {"X-Remote-Extra-Scopes%2fA", "x"}};

TEST(FrontProxy, ReadsTheConfigMapTheApiServerPublishes) {
  RequestHeaderConfig c = config();
  ASSERT_NE(c.client_ca, nullptr);
  EXPECT_EQ(c.client_ca->certificates().size(), 1);
  EXPECT_THAT(c.allowed_names, ElementsAre("front-proxy-client"));
  EXPECT_THAT(c.username_headers, ElementsAre("X-Remote-User"));

  json no_ca = configMap();
  no_ca["data"].erase("requestheader-client-ca-file");
  EXPECT_EQ(requestHeaderConfigFromConfigMap(no_ca).value().client_ca, nullptr);
  json bad_ca = configMap();
  bad_ca["data"]["requestheader-client-ca-file"] = "not a certificate";
  EXPECT_THAT(requestHeaderConfigFromConfigMap(bad_ca).error(),
              HasSubstr("requestheader-client-ca-file"));
  json bad_list = configMap();
  bad_list["data"]["requestheader-allowed-names"] = "front-proxy-client";
  EXPECT_THAT(requestHeaderConfigFromConfigMap(bad_list).error(),
              HasSubstr("requestheader-allowed-names: not a JSON array"));
}

TEST(FrontProxy, TheUserComesFromHeadersOnlyAfterTheCertificate) {
  auto user = authenticate(proxy(), kHeaders, config());
  ASSERT_TRUE(user.has_value()) << user.error();
  EXPECT_EQ(user->name, "system:serviceaccount:kube-system:hpa");
  EXPECT_THAT(user->groups,
              ElementsAre("system:serviceaccounts", "system:serviceaccounts:kube-system",
                          "system:authenticated"));
  EXPECT_THAT(user->extra.at("scopes/a"), ElementsAre("x"));

  // The same headers from a caller without the proxy's certificate are not believed.
  serving::PeerCertificate direct;
  auto anonymous = authenticate(direct, kHeaders, config());
  ASSERT_FALSE(anonymous.has_value());
  EXPECT_THAT(anonymous.error(), HasSubstr("no client certificate signed by the front proxy's CA"));
  // A certificate of that CA with another name: refused when allowed names are set.
  EXPECT_THAT(authenticate(proxy("system:node:a"), kHeaders, config()).error(),
              HasSubstr("CN=\"system:node:a\" is not among requestheader-allowed-names"));
  RequestHeaderConfig any_name = config();
  any_name.allowed_names.clear();
  EXPECT_TRUE(authenticate(proxy("system:node:a"), kHeaders, any_name).has_value());
  // No user header: 401, not anonymous access.
  EXPECT_THAT(authenticate(proxy(), {{"X-Remote-Group", "g"}}, config()).error(),
              HasSubstr("named no user"));
  RequestHeaderConfig no_ca = config();
  no_ca.client_ca = nullptr;
  EXPECT_THAT(authenticate(proxy(), kHeaders, no_ca).error(),
              HasSubstr("--requestheader-client-ca-file"));
}

TEST(AccessReview, AsksForTheResourceOrThePath) {
  UserInfo user{"u", {"g", "system:authenticated"}, {{"scopes", {"a"}}}};
  json review =
      subjectAccessReview({user, ResourceAttributes{"monitoring", "list", "external.metrics.k8s.io",
                                                    "v1beta1", "shardscaler_samples_per_second"}});
  EXPECT_EQ(review["apiVersion"], "authorization.k8s.io/v1");
  EXPECT_EQ(review["kind"], "SubjectAccessReview");
  EXPECT_EQ(review["spec"]["user"], "u");
  EXPECT_EQ(review["spec"]["extra"]["scopes"][0], "a");
  EXPECT_EQ(review["spec"]["resourceAttributes"]["resource"], "shardscaler_samples_per_second");
  EXPECT_EQ(review["spec"]["resourceAttributes"]["verb"], "list");
  json path = subjectAccessReview({user, NonResourceAttributes{"/openapi/v2", "get"}});
  EXPECT_EQ(path["spec"]["nonResourceAttributes"]["path"], "/openapi/v2");
  EXPECT_FALSE(path["spec"].contains("resourceAttributes"));
}

TEST(AccessReview, OnlyAnAllowIsAnAllow) {
  EXPECT_TRUE(accessDecisionOf({{"status", {{"allowed", true}}}})->allowed);
  auto denied = accessDecisionOf({{"status", {{"allowed", false}, {"reason", "no RBAC"}}}});
  EXPECT_FALSE(denied->allowed);
  EXPECT_EQ(denied->reason, "no RBAC");
  EXPECT_FALSE(accessDecisionOf(json::object()).has_value());
  EXPECT_FALSE(accessDecisionOf({{"status", {{"allowed", "yes"}}}})->allowed);
  EXPECT_THAT(accessDecisionOf({{"status", {{"evaluationError", "webhook down"}}}}).error(),
              HasSubstr("webhook down"));
  const AccessRequest request{{"bob", {}, {}},
                              ResourceAttributes{"ns", "list", "external.metrics.k8s.io", "v1beta1",
                                                 "shardscaler_samples_per_second"}};
  EXPECT_EQ(forbiddenMessage(request, {false, ""}),
            "User \"bob\" cannot list resource \"shardscaler_samples_per_second\" in API group "
            "\"external.metrics.k8s.io\" in the namespace \"ns\"");
}

TEST(AccessReview, CachedAnswersExpire) {
  AccessDecisionCache cache({.allowed_ttl = std::chrono::seconds(10),
                             .denied_ttl = std::chrono::seconds(2),
                             .max_entries = 2});
  const AccessDecisionCache::TimePoint t0{};
  const AccessRequest alice{{"alice", {}, {}}, NonResourceAttributes{"/apis", "get"}};
  const AccessRequest bob{{"bob", {}, {}}, NonResourceAttributes{"/apis", "get"}};
  EXPECT_NE(AccessDecisionCache::keyOf(alice), AccessDecisionCache::keyOf(bob));
  cache.put(AccessDecisionCache::keyOf(alice), {true, ""}, t0);
  cache.put(AccessDecisionCache::keyOf(bob), {false, ""}, t0);
  EXPECT_TRUE(cache.find(AccessDecisionCache::keyOf(alice), t0 + std::chrono::seconds(9))->allowed);
  EXPECT_FALSE(cache.find(AccessDecisionCache::keyOf(bob), t0 + std::chrono::seconds(1))->allowed);
  EXPECT_EQ(cache.find(AccessDecisionCache::keyOf(bob), t0 + std::chrono::seconds(2)),
            std::nullopt);
  EXPECT_EQ(cache.find(AccessDecisionCache::keyOf(alice), t0 + std::chrono::seconds(10)),
            std::nullopt);
  cache.put("a", {true, ""}, t0);
  cache.put("b", {true, ""}, t0);
  cache.put("c", {true, ""}, t0);
  EXPECT_LE(cache.size(), 2);
}

TEST(ApiServiceState, TellsWhoOwnsTheGroup) {
  const ServiceReference ours{"monitoring", "shardscaler-metrics-api"};
  EXPECT_EQ(apiServiceState(json(), ours).ownership, Ownership::Missing);
  json keda = {
      {"spec", {{"service", {{"namespace", "keda"}, {"name", "keda-operator-metrics-apiserver"}}}}},
      {"status",
       {{"conditions", {{{"type", "Available"}, {"status", "True"}, {"reason", "Passed"}}}}}}};
  auto other = apiServiceState(keda, ours);
  EXPECT_EQ(other.ownership, Ownership::Other);
  EXPECT_EQ(other.owner, "keda/keda-operator-metrics-apiserver");
  EXPECT_TRUE(other.available);
  EXPECT_THAT(describe(other, ours), HasSubstr("belongs to keda/keda-operator-metrics-apiserver"));
  json mine = {
      {"spec", {{"service", {{"namespace", "monitoring"}, {"name", "shardscaler-metrics-api"}}}}},
      {"status",
       {{"conditions",
         {{{"type", "Available"},
           {"status", "False"},
           {"reason", "FailedDiscoveryCheck"},
           {"message", "timeout"}}}}}}};
  auto state = apiServiceState(mine, ours);
  EXPECT_EQ(state.ownership, Ownership::Ours);
  EXPECT_FALSE(state.available);
  EXPECT_THAT(describe(state, ours), HasSubstr("not available (FailedDiscoveryCheck: timeout)"));
  EXPECT_EQ(apiServiceState({{"spec", json::object()}}, ours).ownership, Ownership::Local);
}

TEST(Discovery, ListsEveryServedMetricAndNothingElse) {
  json list = apiResourceList();
  EXPECT_EQ(list["kind"], "APIResourceList");
  EXPECT_EQ(list["groupVersion"], "external.metrics.k8s.io/v1beta1");
  ASSERT_EQ(list["resources"].size(), metricInfos().size());
  for (const json& r : list["resources"]) {
    EXPECT_TRUE(metricKindOf(r["name"].get<std::string>()).has_value());
    EXPECT_EQ(r["namespaced"], true);
    EXPECT_EQ(r["verbs"], json::array({"get"}));
  }
  EXPECT_EQ(apiGroup()["preferredVersion"]["groupVersion"], "external.metrics.k8s.io/v1beta1");
  EXPECT_EQ(apiGroupList()["groups"][0]["name"], "external.metrics.k8s.io");
  const OpenApiDocument& openapi = openApiV2();
  json doc = json::parse(openapi.body);
  EXPECT_EQ(doc["swagger"], "2.0");
  EXPECT_EQ(openapi.etag.front(), '"');
  EXPECT_EQ(openapi.etag.size(), 66);
}

}  // namespace
}  // namespace shardscaler::metrics_api
