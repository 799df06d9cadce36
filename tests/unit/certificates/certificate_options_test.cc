// CertificateOptions: validation messages name the setting; the parts built for each mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "shardscaler/certificates/certificate_options.h"
#include "shardscaler/k8s_testing/fake_kube_client.h"

namespace shardscaler::certificates {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CertificateOptions secretMode() {
  CertificateOptions o;
  o.secret_namespace = "monitoring";
  o.hosts = serviceHosts("shardscaler-webhook", "monitoring");
  return o;
}

TEST(CertificateOptions, ServiceHostsAreTheNamesAServiceAnswersTo) {
  EXPECT_THAT(serviceHosts("guard", "mon"),
              ElementsAre("guard", "guard.mon", "guard.mon.svc", "guard.mon.svc.cluster.local"));
  EXPECT_THAT(serviceHosts("guard", "mon", ""), ElementsAre("guard", "guard.mon", "guard.mon.svc"));
}

TEST(CertificateOptions, ValidationNamesTheSetting) {
  EXPECT_TRUE(validate(secretMode()).has_value());
  auto o = secretMode();
  o.secret_namespace.clear();
  EXPECT_THAT(validate(o).error(), HasSubstr("namespace"));
  o = secretMode();
  o.hosts.clear();
  EXPECT_THAT(validate(o).error(), HasSubstr("at least one host"));
  o = secretMode();
  o.rotation.ca_validity = o.rotation.serving_validity;
  EXPECT_THAT(validate(o).error(), HasSubstr("CA validity"));
  o = secretMode();
  o.injector_resync_period = {};
  EXPECT_THAT(validate(o).error(), HasSubstr("injector_resync_period"));
  o = CertificateOptions{};
  o.certificate_mode = CertificateMode::Directory;
  EXPECT_THAT(validate(o).error(), HasSubstr("certificate_directory"));
  o.certificate_directory = "/etc/shardscaler/tls";
  EXPECT_TRUE(validate(o).has_value());
}

TEST(CertificateOptions, SecretModeMakesAStoreAndAnInjector) {
  k8s::testing::FakeKubeClient client;
  auto clock = std::make_shared<k8s::ManualClock>();
  auto parts = makeCertificateParts(secretMode(), client, clock);
  ASSERT_TRUE(parts.has_value()) << parts.error();
  EXPECT_NE(parts->store, nullptr);
  EXPECT_EQ(parts->files, nullptr);
  EXPECT_EQ(parts->source, parts->store);
  EXPECT_NE(parts->injector, nullptr);

  auto o = secretMode();
  o.webhook_configuration_name.clear();
  auto no_injector = makeCertificateParts(o, client, clock);
  ASSERT_TRUE(no_injector.has_value());
  EXPECT_EQ(no_injector->injector, nullptr);
  o.api_services = {{"v1beta1.external.metrics.k8s.io", "monitoring", "shardscaler-metrics-api"}};
  EXPECT_NE(makeCertificateParts(o, client, clock)->injector, nullptr);
}

TEST(CertificateOptions, DirectoryModeWritesNothing) {
  k8s::testing::FakeKubeClient client;
  CertificateOptions o;
  o.certificate_mode = CertificateMode::Directory;
  o.certificate_directory = "/nonexistent";
  auto parts = makeCertificateParts(o, client, std::make_shared<k8s::ManualClock>());
  ASSERT_TRUE(parts.has_value()) << parts.error();
  EXPECT_EQ(parts->source, parts->files);
  EXPECT_EQ(parts->store, nullptr);
  EXPECT_EQ(parts->injector, nullptr);
  EXPECT_THAT(makeCertificateParts(CertificateOptions{}, client, nullptr).error(),
              HasSubstr("namespace"));
}

}  // namespace
}  // namespace shardscaler::certificates
