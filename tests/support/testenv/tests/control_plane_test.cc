// Integration tests of the local control plane: kubectl through the written kubeconfig, RBAC
// for the unprivileged users, the controllers, and that nothing outlives a ControlPlane.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/process_table.h"

namespace shardscaler::testenv {
namespace {

// The waits look every 100 ms, as they did before the kit.
constexpr std::chrono::milliseconds kWaitPoll{100};

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

struct Shell {
  int exit_code;
  std::string output;  // stdout and stderr
};

// Runs a command line the way a person at a terminal would, to check what the control plane
// hands out (kubeconfig files) independently of ControlPlane::kubectl().
Shell shell(const std::string& command) {
  Shell result{-1, ""};
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string kubectlBinary() {
  const char* kubectl = std::getenv("SHARDSCALER_KUBECTL");
  return kubectl && *kubectl ? kubectl : "/usr/bin/kubectl";
}

// Namespaced objects per test, so tests stay independent on the shared control plane.
std::string createNamespace(const std::string& name) {
  std::string err;
  EXPECT_EQ(sharedControlPlane().kubectl("create namespace " + name, nullptr, &err), 0) << err;
  return name;
}

std::string statefulSetManifest(const std::string& ns, int replicas) {
  return R"(apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: )" +
         ns + R"(
spec:
  replicas: )" +
         std::to_string(replicas) + R"(
  podManagementPolicy: Parallel
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.invalid/web:1
        resources:
          requests: {cpu: 100m}
)";
}

std::string podNames(const std::string& ns) {
  std::string out;
  sharedControlPlane().kubectl(
      "get pods -n " + ns + " -o jsonpath='{range .items[*]}{.metadata.name} {end}'", &out);
  return out;
}

TEST(ControlPlaneTest, KubectlListsNamespacesThroughTheWrittenKubeconfig) {
  auto& plane = sharedControlPlane();
  EXPECT_THAT(plane.server(), ::testing::StartsWith("https://127.0.0.1:"));
  ASSERT_TRUE(std::filesystem::exists(plane.kubeconfigPath()));
  auto result = shell(kubectlBinary() + " --kubeconfig " + plane.kubeconfigPath().string() +
                      " --cache-dir " + (plane.workDir() / "kubectl-cache").string() + " get ns");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("default"));
  EXPECT_THAT(result.output, HasSubstr("kube-system"));
}

TEST(ControlPlaneTest, ServingCertificateVerifiesAgainstTheCaForLoopbackAndLocalhost) {
  auto& plane = sharedControlPlane();
  const std::string port = std::to_string(plane.port());
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    std::string command = "curl -sS --fail --cacert ";
    command.append(plane.caFile().string())
        .append(" -H 'Authorization: Bearer ")
        .append(plane.adminToken())
        .append("' https://")
        .append(host)
        .append(":")
        .append(port)
        .append("/readyz");
    auto result = shell(command);
    EXPECT_EQ(result.exit_code, 0) << host << ": " << result.output;
    EXPECT_EQ(result.output, "ok") << host;
  }
}

TEST(ControlPlaneTest, UnprivilegedUserIsForbidden) {
  auto& plane = sharedControlPlane();
  const auto kubeconfig = plane.writeKubeconfig("user-1", plane.userToken(1), "default");
  auto result = shell(kubectlBinary() + " --kubeconfig " + kubeconfig.string() + " --cache-dir " +
                      (plane.workDir() / "kubectl-cache").string() + " get pods");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.output, HasSubstr("Forbidden"));
  EXPECT_THAT(result.output, HasSubstr("\"user-1\""));

  auto whoami = shell(kubectlBinary() + " --kubeconfig " + kubeconfig.string() + " --cache-dir " +
                      (plane.workDir() / "kubectl-cache").string() + " auth can-i list pods");
  EXPECT_EQ(whoami.exit_code, 1) << whoami.output;  // "no", not an authentication error
  EXPECT_THAT(whoami.output, HasSubstr("no"));
}

TEST(ControlPlaneTest, UserTokensAreDistinctAndBounded) {
  auto& plane = sharedControlPlane();
  EXPECT_NE(plane.userToken(1), plane.userToken(2));
  EXPECT_NE(plane.userToken(1), plane.adminToken());
  EXPECT_THROW(plane.userToken(0), std::out_of_range);
  EXPECT_THROW(plane.userToken(ControlPlane::kUserCount + 1), std::out_of_range);
}

TEST(ControlPlaneTest, StatefulSetControllerCreatesPodsAndGarbageCollectorDeletesThem) {
  auto& plane = sharedControlPlane();
  const std::string ns = createNamespace("sts-test");
  std::string out, err;
  ASSERT_EQ(plane.kubectl("apply -f -", &out, &err, statefulSetManifest(ns, 2)), 0) << err;

  // No kubelet: pods are created and stay Pending.
  ASSERT_TRUE(test_kit::eventually(60s, kWaitPoll, [&] { return podNames(ns) == "web-0 web-1 "; }))
      << podNames(ns);
  ASSERT_EQ(plane.kubectl("get pod web-0 -n " + ns + " -o jsonpath='{.status.phase}'", &out, &err),
            0)
      << err;
  EXPECT_EQ(out, "Pending");

  // kubectl 1.32 against the 1.20 server: scale and describe.
  ASSERT_EQ(plane.kubectl("scale statefulset/web -n " + ns + " --replicas=3", &out, &err), 0)
      << err;
  EXPECT_TRUE(test_kit::eventually(60s, kWaitPoll, [&] {
    return podNames(ns) == "web-0 web-1 web-2 ";
  })) << podNames(ns);
  ASSERT_EQ(plane.kubectl("describe statefulset web -n " + ns, &out, &err), 0) << err;
  EXPECT_THAT(out, HasSubstr("Replicas:"));

  // Foreground deletion waits for the garbage collector to delete the pods first.
  ASSERT_EQ(plane.kubectl("delete statefulset web -n " + ns + " --cascade=foreground --wait=false",
                          &out, &err),
            0)
      << err;
  EXPECT_TRUE(test_kit::eventually(60s, kWaitPoll, [&] {
    std::string sts;
    return podNames(ns).empty() &&
           plane.kubectl("get statefulset web -n " + ns + " --ignore-not-found -o name", &sts) ==
               0 &&
           sts.empty();
  })) << podNames(ns);
}

TEST(ControlPlaneTest, HorizontalPodAutoscalerControllerSyncs) {
  auto& plane = sharedControlPlane();
  const std::string ns = createNamespace("hpa-test");
  std::string out, err;
  ASSERT_EQ(plane.kubectl("apply -f -", &out, &err, statefulSetManifest(ns, 1)), 0) << err;
  ASSERT_EQ(
      plane.kubectl("autoscale statefulset web -n " + ns + " --min=1 --max=3 --cpu-percent=50",
                    &out, &err),
      0)
      << err;
  // There is no metrics API, so the controller reports that it cannot get metrics; that it
  // reports anything at all shows it runs (every 2 s here).
  EXPECT_TRUE(test_kit::eventually(60s, kWaitPoll, [&] {
    plane.kubectl("get horizontalpodautoscalers.v2beta2.autoscaling web -n " + ns +
                      " -o jsonpath='{.status.conditions[*].type}'",
                  &out);
    return out.find("AbleToScale") != std::string::npos;
  })) << out;
}

TEST(ControlPlaneTest, ServiceAccountTokenControllerMakesTokenSecrets) {
  auto& plane = sharedControlPlane();
  const std::string ns = createNamespace("sa-test");
  std::string out;
  EXPECT_TRUE(test_kit::eventually(60s, kWaitPoll, [&] {
    plane.kubectl("get secrets -n " + ns +
                      " -o jsonpath='{.items[?(@.type==\"kubernetes.io/service-account-token\")]"
                      ".data.ca\\.crt}'",
                  &out);
    return !out.empty();
  }));
}

TEST(ControlPlaneTest, DestroyingTheControlPlaneLeavesNoProcessAndNoDirectory) {
  std::filesystem::path work_dir;
  std::vector<pid_t> pids;
  {
    ControlPlane plane;
    work_dir = plane.workDir();
    pids = plane.serverPids();
    ASSERT_EQ(pids.size(), 3u);
    for (pid_t pid : pids) EXPECT_TRUE(processAlive(pid)) << pid;
    EXPECT_EQ(processesMentioning(work_dir.string() + "/").size(), 3u);
    std::string out, err;
    ASSERT_EQ(plane.kubectl("get ns default -o name", &out, &err), 0) << err;
    EXPECT_EQ(out, "namespace/default\n");
  }
  // The destructor reaps its children, so there is nothing to wait for.
  for (pid_t pid : pids) EXPECT_FALSE(processAlive(pid)) << pid;
  EXPECT_THAT(processesMentioning(work_dir.string() + "/"), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(work_dir));
}

}  // namespace
}  // namespace shardscaler::testenv

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
