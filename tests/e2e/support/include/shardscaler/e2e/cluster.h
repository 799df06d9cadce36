// What the end-to-end tests share: the control plane with the CRDs installed, a namespace per
// test, a client and kubectl, and bounded waits. It asserts nothing itself.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"

namespace shardscaler::e2e {

using k8s::Json;

// The control plane of this test binary with the ShardSet CRD (deploy/crds) and the operator's
// stand-in CRDs (tests/support/crds) installed and established.
testenv::ControlPlane& cluster();
// A RestClient with the admin kubeconfig.
k8s::RestClient& adminClient();
// A fresh namespace "<prefix>-<n>".
std::string createNamespace(const std::string& prefix);

struct KubectlResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// kubectl with the admin kubeconfig; args go through /bin/sh.
KubectlResult kubectl(const std::string& args, const std::string& input = {});
// kubectl apply -f - of a YAML document; throws std::runtime_error with kubectl's error.
void apply(const std::string& yaml);

// How often an end-to-end wait (test_kit::eventually) looks again: each look asks the API
// server, kubectl or a process, which share two cores with shardscaler and the emulator.
inline constexpr std::chrono::milliseconds kPoll{100};

// The object, or null JSON when it does not exist (other errors throw).
Json getOrNull(const k8s::Resource& resource, const std::string& ns, const std::string& name);

// The token the token controller minted for the ServiceAccount (Kubernetes 1.20: a Secret listed
// in the ServiceAccount's `secrets`); waits up to a minute, then throws std::runtime_error.
std::string serviceAccountToken(const std::string& ns, const std::string& name);
// The token in the Secret `secret` of type kubernetes.io/service-account-token, once the token
// controller filled it in; waits up to a minute, then throws std::runtime_error.
std::string secretToken(const std::string& ns, const std::string& secret);

// Directory for this test's logs (kept under the control plane's work directory).
std::filesystem::path testLogDir();

// Paths in the source tree.
std::filesystem::path sourceDir();

}  // namespace shardscaler::e2e
