// A shardscaler outage against the real API server, with the webhook configuration exactly as
// deploy/ installs it: deploy/base (the standalone release flavour) is applied whole (its
// Deployment's pods never run: the test control plane has no kubelet, so the Service
// shardscaler-webhook has no endpoints, as when every replica is stopped), and the caBundle is
// in, as a shardscaler that ran once leaves it. The API server cannot reach the guard. Then:
// - the operator's UPDATE of an active shard's spec (a resources change) succeeds;
// - a DELETE of an active or a retained shard is refused;
// - a re-attach of a retained shard (the operator's label patch) is refused, as is any other
//   UPDATE of a retained shard.
// The operator is a plain user with the Prometheus Operator's rights (user-2); the admin is
// refused the same: failurePolicy does not know identities.
#include <gmock/gmock.h>

#include <chrono>
#include <fstream>

#include "../unit/deploy/yaml_json.h"
#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/hand_built_shards.h"
#include "shardscaler/guard/guard_status.h"
#include "shardscaler/k8s_client/base64.h"
#include "shardscaler/k8s_meta/time.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const k8s::Resource kWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                           "validatingwebhookconfigurations", false};
constexpr const char* kConfiguration = "shardscaler-guard";

std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class GuardOutageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // The API server resolves a webhook's Service through its Endpoints, as with kube-proxy in a
    // cluster, rather than by a DNS name that nothing here serves: with no pod behind the Service,
    // every call fails at once, and never leaves the machine.
    testenv::ControlPlaneOptions options;
    options.extra_apiserver_flags = {"--enable-aggregator-routing=true"};
    testenv::setSharedControlPlaneOptions(std::move(options));
    auto applied = kubectl("apply -k " + (sourceDir() / "deploy/base").string());
    ASSERT_EQ(applied.exit_code, 0) << applied.err;
    // The caBundle a shardscaler that ran once injected (any CA: nothing answers anyway).
    const std::string bundle = k8s::base64Encode(readText(cluster().caFile()));
    Json configuration = getOrNull(kWebhookConfigurations, "", kConfiguration);
    ASSERT_TRUE(configuration.is_object());
    Json patch = Json::array();
    for (size_t i = 0; i < configuration["webhooks"].size(); ++i) {
      patch.push_back({{"op", "add"},
                       {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"},
                       {"value", bundle}});
    }
    auto patched = adminClient().patch(kWebhookConfigurations, "", kConfiguration,
                                       k8s::PatchType::Json, patch);
    ASSERT_TRUE(patched) << patched.error().describe();
  }

  static void TearDownTestSuite() {
    (void)kubectl("delete -k " + (sourceDir() / "deploy/base").string() +
                  " --ignore-not-found --wait=false");
  }

  void SetUp() override {
    ns_ = createNamespace("outage");
    buildTargetByHand(ns_, 2);
    createActiveShard(ns_, 0);
    createActiveShard(ns_, 1);
    createRetainedShard(ns_, 3, k8s::formatTime(std::chrono::system_clock::now() + 1h));
    grantOperatorRole(ns_, "user-2");
    operator_ = cluster().writeKubeconfig("outage-operator-" + ns_, cluster().userToken(2), ns_);
  }

  KubectlResult asOperator(const std::string& args) {
    return kubectl("--kubeconfig " + operator_.string() + " " + args + " -n " + ns_);
  }

  std::string ns_;
  std::filesystem::path operator_;
};

TEST_F(GuardOutageTest, TheInstallIsWhatDeployRendersAndItsGuardIsEnforcedButUnreachable) {
  // No pod runs: the Service has no address to lead the API server to.
  const Json endpoints =
      getOrNull({"", "v1", "endpoints", true}, "shardscaler-system", "shardscaler-webhook");
  EXPECT_TRUE(!endpoints.is_object() || endpoints.value("subsets", Json::array()).empty() ||
              !endpoints["subsets"][0].contains("addresses"))
      << endpoints.dump();
  // What the controller would read: the guard is enforced, so its transitions rely on it.
  const guard::GuardStatus status = guard::readGuardStatus(adminClient(), kConfiguration, ns_);
  EXPECT_TRUE(status.enforced) << status.reason;
}

TEST_F(GuardOutageTest, TheOperatorsUpdateOfAnActiveShardsSpecSucceeds) {
  const std::string shard = handBuiltShardName(1);
  const auto r = asOperator(
      "patch statefulset " + shard +
      " --type=json -p '[{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/resources\","
      "\"value\":{\"limits\":{\"memory\":\"4Gi\"}}}]'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, shard);
  EXPECT_EQ(sts["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"],
            "4Gi");
  // The operator's label patch of an active shard (CreateStatefulSetOrPatchLabels) too.
  const auto labels = asOperator("label statefulset " + shard + " team=a --overwrite");
  EXPECT_EQ(labels.exit_code, 0) << labels.err;
}

TEST_F(GuardOutageTest, DeletingAnActiveOrARetainedShardIsRefused) {
  for (int index : {0, 1, 3}) {
    const std::string shard = handBuiltShardName(index);
    for (const bool admin : {false, true}) {
      const auto r = admin ? kubectl("delete statefulset " + shard + " -n " + ns_ + " --wait=false")
                           : asOperator("delete statefulset " + shard + " --wait=false");
      EXPECT_NE(r.exit_code, 0) << shard << " deleted while shardscaler is down";
      EXPECT_THAT(r.err, HasSubstr("failed calling webhook \"delete.guard.shardscaler.io\""))
          << shard;
    }
    EXPECT_TRUE(intact(ns_, shard)) << shard;
  }
}

TEST_F(GuardOutageTest, ReattachingARetainedShardIsRefused) {
  const std::string shard = handBuiltShardName(3);
  // The stale operator's re-attach: a strategic merge patch of its labels back on.
  const auto reattach =
      asOperator("patch statefulset " + shard +
                 " --type=strategic -p '{\"metadata\":{\"labels\":{\"operator.prometheus.io/name\":"
                 "\"main\"}}}'");
  EXPECT_NE(reattach.exit_code, 0) << "re-attached while shardscaler is down";
  EXPECT_THAT(reattach.err, HasSubstr("failed calling webhook \"retained.guard.shardscaler.io\""));
  // Nor can the first step of a two-step re-attach, or any other change of a retained shard.
  for (const std::string& args :
       {"label statefulset " + shard + " shardscaler.io/retained-",
        "annotate statefulset " + shard + " shardscaler.io/deletion-deadline-",
        "patch statefulset " + shard +
            " --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":1}]'"}) {
    const auto r = asOperator(args);
    EXPECT_NE(r.exit_code, 0) << args << " was allowed";
    EXPECT_THAT(r.err, HasSubstr("failed calling webhook")) << args;
  }
  const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, shard);
  ASSERT_TRUE(sts.is_object());
  EXPECT_FALSE(sts["metadata"]["labels"].contains("operator.prometheus.io/name"));
  EXPECT_EQ(sts["metadata"]["labels"].value("shardscaler.io/retained", ""), "true");
}

}  // namespace
}  // namespace shardscaler::e2e
