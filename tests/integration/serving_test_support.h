// Shared by the serving integration tests: an admin client of the shared control plane, a fresh
// namespace per test, short rotation settings, and reading a certificate Secret.
// Tests only; everything they create lives in their own namespace or carries their name.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "shardscaler/certificates/secret_certificate_store.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::certificates::integration {

using k8s::Json;

inline k8s::RestClient& adminClient() {
  static k8s::RestClient* client = [] {
    auto config = k8s::loadKubeconfigFiles({testenv::sharedControlPlane().kubeconfigPath()});
    if (!config) throw std::runtime_error(config.error().describe());
    return new k8s::RestClient(*config);
  }();
  return *client;
}

// "serving-<test name>", lower case, created for the test.
inline std::string createTestNamespace(const std::string& prefix) {
  std::string name = prefix + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  name = name.substr(0, 60);
  auto created = adminClient().create(
      k8s::resources::namespaces(), "",
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  if (!created) throw std::runtime_error("create namespace: " + created.error().describe());
  return name;
}

// Rotation in seconds: serving 9 s (rotated at 6 s), CA 18 s (replaced at 9 s, when it has no
// more than a serving validity left), a new CA published 2 s before it signs.
inline RotationPolicy secondsPolicy() {
  return RotationPolicy{.serving_validity = std::chrono::seconds(9),
                        .ca_validity = std::chrono::seconds(18),
                        .rotate_at = 2.0 / 3.0,
                        .bundle_propagation = std::chrono::seconds(2),
                        .backdate = std::chrono::seconds(1)};
}

inline SecretCertificateStoreOptions storeOptions(const std::string& ns) {
  SecretCertificateStoreOptions o;
  o.secret_namespace = ns;
  o.secret_name = "serving-cert";
  o.hosts = {"127.0.0.1", "guard." + ns + ".svc"};
  o.poll_period = std::chrono::milliseconds(250);
  o.retry_period = std::chrono::milliseconds(250);
  return o;
}

inline std::string fingerprintOf(const CertificateSource& source) {
  const auto current = source.current();
  return current ? current->leaf().fingerprint() : std::string();
}

}  // namespace shardscaler::certificates::integration
