// Shared set-up of the RestClient tests: a KubeConfig aimed at a FakeApiServer.
#pragma once

#include <string>

#include "rest_fake_server.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::k8s::testing {

inline KubeConfig configFor(const FakeApiServer& server, const std::string& token = "tok") {
  KubeConfig config;
  config.server = server.url();
  config.token = token;
  config.origin = "test";
  return config;
}

}  // namespace shardscaler::k8s::testing
