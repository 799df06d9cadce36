// What shardscaler registers for external.metrics.k8s.io: only where nothing serves the group,
// an APIService naming its own Service, owned by the install, and what it says when another
// server owns the group.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shardscaler/metrics_api/api_service_registration.h"

namespace shardscaler::metrics_api {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

const ServiceReference kOurs{"shardscaler-system", "shardscaler-metrics-api"};

Json apiService(const Json& service) {
  Json o = {{"metadata", {{"name", kApiServiceName}}}, {"spec", Json::object()}};
  if (!service.is_null()) o["spec"]["service"] = service;
  return o;
}

TEST(ApiServiceRegistration, CreatesOnlyWhereNothingServesTheGroup) {
  EXPECT_TRUE(shouldCreate(apiServiceState(Json(), kOurs)));
  const Json keda = {{"namespace", "keda"}, {"name", "keda-operator-metrics-apiserver"}};
  EXPECT_FALSE(shouldCreate(apiServiceState(apiService(keda), kOurs)));
  EXPECT_FALSE(shouldCreate(apiServiceState(apiService(Json()), kOurs)));  // served locally
  const Json ours = {{"namespace", kOurs.ns}, {"name", kOurs.name}};
  EXPECT_FALSE(shouldCreate(apiServiceState(apiService(ours), kOurs)));
}

TEST(ApiServiceRegistration, TheApiServiceNamesOurServiceAndBelongsToTheInstall) {
  const Json owner = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "ValidatingWebhookConfiguration"},
      {"metadata",
       {{"name", "shardscaler-guard"},
        {"uid", "u-1"},
        {"annotations",
         {{"cert-manager.io/inject-ca-from", "shardscaler-system/shardscaler-webhook"},
          {"other", "x"}}}}}};
  const Json o = apiServiceFor(kOurs, "Q0E=", owner);
  EXPECT_EQ(o["apiVersion"], "apiregistration.k8s.io/v1");
  EXPECT_EQ(o["kind"], "APIService");
  EXPECT_EQ(o["metadata"]["name"], "v1beta1.external.metrics.k8s.io");
  EXPECT_EQ(o["spec"]["group"], "external.metrics.k8s.io");
  EXPECT_EQ(o["spec"]["version"], "v1beta1");
  EXPECT_EQ(o["spec"]["service"], Json({{"namespace", "shardscaler-system"},
                                        {"name", "shardscaler-metrics-api"},
                                        {"port", 443}}));
  EXPECT_EQ(o["spec"]["caBundle"], "Q0E=");
  EXPECT_FALSE(o["spec"].contains("insecureSkipTLSVerify"));
  EXPECT_EQ(o["metadata"]["ownerReferences"],
            Json::parse(R"([{"apiVersion":"admissionregistration.k8s.io/v1",
                              "kind":"ValidatingWebhookConfiguration",
                              "name":"shardscaler-guard","uid":"u-1"}])"));
  EXPECT_EQ(o["metadata"]["annotations"],
            Json({{"cert-manager.io/inject-ca-from", "shardscaler-system/shardscaler-webhook"}}));
  // The state it reads back as is ours: the injector keeps its caBundle, nothing creates another.
  EXPECT_EQ(apiServiceState(o, kOurs).ownership, Ownership::Ours);

  const Json bare = apiServiceFor(kOurs, "", Json());
  EXPECT_FALSE(bare["metadata"].contains("ownerReferences"));
  EXPECT_FALSE(bare["metadata"].contains("annotations"));
  EXPECT_FALSE(bare["spec"].contains("caBundle"));
}

TEST(ApiServiceRegistration, SaysWhyItLeavesAnotherServersApiServiceInPlace) {
  const Json keda = {{"namespace", "keda"}, {"name", "keda-operator-metrics-apiserver"}};
  const std::string m = notOursMessage(apiServiceState(apiService(keda), kOurs), kOurs);
  EXPECT_THAT(m, HasSubstr("shardscaler leaves APIService v1beta1.external.metrics.k8s.io in "
                           "place: it names keda/keda-operator-metrics-apiserver, and only one "
                           "server can own external.metrics.k8s.io"));
  EXPECT_THAT(m, HasSubstr("shardscaler-system/shardscaler-metrics-api"));
  EXPECT_THAT(notOursMessage(apiServiceState(apiService(Json()), kOurs), kOurs),
              HasSubstr("the API server serves the group itself"));
  EXPECT_EQ(notOursMessage(apiServiceState(Json(), kOurs), kOurs), "");
}

}  // namespace
}  // namespace shardscaler::metrics_api
