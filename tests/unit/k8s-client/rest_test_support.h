// Shared set-up of the RestClient tests: a KubeConfig aimed at the kit's HttpServer, and the
// metav1.Status bodies an API server answers errors with.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/test_kit/test_http_server.h"

namespace shardscaler::k8s::testing {

inline KubeConfig configFor(const test_kit::HttpServer& server, const std::string& token = "tok") {
  KubeConfig config;
  config.server = server.url();
  config.token = token;
  config.origin = "test";
  return config;
}

// A metav1.Status body.
inline std::string statusJson(int code, const std::string& reason, const std::string& message) {
  nlohmann::json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
  return status.dump();
}

}  // namespace shardscaler::k8s::testing
