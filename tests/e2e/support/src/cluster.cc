#include "shardscaler/e2e/cluster.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::e2e {
namespace {

std::once_flag crds_installed;

void installCrds(testenv::ControlPlane& cp) {
  std::string out, err;
  const std::string files = "-f " + (sourceDir() / "deploy/crds").string() + " -f " +
                            (sourceDir() / "tests/support/crds").string();
  if (cp.kubectl("apply " + files, &out, &err) != 0) {
    throw std::runtime_error("installing CRDs failed: " + err);
  }
  if (cp.kubectl("wait --for condition=established --timeout=60s " + files, &out, &err) != 0) {
    throw std::runtime_error("CRDs not established: " + err);
  }
}

}  // namespace

std::filesystem::path sourceDir() { return SHARDSCALER_SOURCE_DIR; }

testenv::ControlPlane& cluster() {
  testenv::ControlPlane& cp = testenv::sharedControlPlane();
  std::call_once(crds_installed, [&] { installCrds(cp); });
  return cp;
}

k8s::RestClient& adminClient() {
  static k8s::RestClient* client = [] {
    auto config = k8s::loadKubeconfigFiles({cluster().kubeconfigPath()});
    if (!config) throw std::runtime_error("admin kubeconfig: " + config.error().describe());
    return new k8s::RestClient(std::move(*config));  // lives for the whole test binary
  }();
  return *client;
}

std::string createNamespace(const std::string& prefix) {
  static std::atomic<int> counter{0};
  std::string name = prefix + "-" + std::to_string(++counter);
  Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  auto created = adminClient().create(k8s::resources::namespaces(), "", ns);
  if (!created)
    throw std::runtime_error("create namespace " + name + ": " + created.error().describe());
  // Pods need the namespace's default ServiceAccount; its token controller makes it quickly.
  test_kit::eventually(std::chrono::seconds(30), kPoll, [&](std::string*) {
    return adminClient().get(k8s::resources::serviceAccounts(), name, "default").has_value();
  });
  return name;
}

KubectlResult kubectl(const std::string& args, const std::string& input) {
  KubectlResult r;
  r.exit_code = cluster().kubectl(args, &r.out, &r.err, input);
  return r;
}

void apply(const std::string& yaml) {
  auto r = kubectl("apply -f -", yaml);
  if (r.exit_code != 0) throw std::runtime_error("kubectl apply failed: " + r.err + "\n" + yaml);
}

Json getOrNull(const k8s::Resource& resource, const std::string& ns, const std::string& name) {
  auto r = adminClient().get(resource, ns, name);
  if (r) return *r;
  if (r.error().is(k8s::ErrorKind::NotFound)) return nullptr;
  throw std::runtime_error("get " + resource.describe() + " " + ns + "/" + name + ": " +
                           r.error().describe());
}

std::filesystem::path testLogDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  auto dir = cluster().workDir() / "e2e" / name;
  std::filesystem::create_directories(dir);
  return dir;
}

namespace {

// The token of a filled-in service-account-token Secret, or "".
std::string tokenOf(const Json& secret) {
  if (!secret.is_object() || secret.value("type", "") != "kubernetes.io/service-account-token" ||
      !secret.contains("data") || !secret["data"].contains("token")) {
    return {};
  }
  return k8s::base64Decode(secret["data"]["token"].get<std::string>()).value_or("");
}

}  // namespace

std::string serviceAccountToken(const std::string& ns, const std::string& name) {
  std::string token;
  const bool found = test_kit::eventually(std::chrono::seconds(60), kPoll, [&](std::string* seen) {
    Json sa = getOrNull(k8s::resources::serviceAccounts(), ns, name);
    if (!sa.is_object() || sa.value("secrets", Json::array()).empty()) {
      *seen = "ServiceAccount " + name + " has no token Secret yet";
      return false;
    }
    for (const Json& ref : sa["secrets"]) {
      token = tokenOf(getOrNull(k8s::resources::secrets(), ns, ref.value("name", "")));
      if (!token.empty()) return true;
    }
    *seen = "no token in the Secrets of " + name;
    return false;
  });
  if (!found) throw std::runtime_error("no token for ServiceAccount " + ns + "/" + name);
  return token;
}

std::string secretToken(const std::string& ns, const std::string& secret) {
  std::string token;
  const bool found = test_kit::eventually(std::chrono::seconds(60), kPoll, [&] {
    token = tokenOf(getOrNull(k8s::resources::secrets(), ns, secret));
    return !token.empty();
  });
  if (!found) throw std::runtime_error("the token controller never filled " + ns + "/" + secret);
  return token;
}

}  // namespace shardscaler::e2e
