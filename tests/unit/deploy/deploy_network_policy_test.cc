// Who may reach shardscaler's pods as deploy/ installs them: the webhook port (the shard guard and
// the external metrics API) only from the API server, every other port of the pod (shardscaler's
// /metrics and probes, the operator's own in the sidecar install) from anywhere as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

class NetworkPolicyTest : public ::testing::TestWithParam<ShardscalerInstall> {
 protected:
  const std::vector<Json>& objects() const { return render(GetParam().dir).objects; }
};

// The container port a NetworkPolicy port names (by name or number) in this pod, if any.
std::optional<int64_t> containerPort(const Json& pod_spec, const Json& port) {
  const Json& ref = port.value("port", Json());
  for (const Json& container : pod_spec.value("containers", Json::array())) {
    for (const Json& cp : container.value("ports", Json::array())) {
      if ((ref.is_string() && cp.value("name", "") == ref.get<std::string>()) ||
          (ref.is_number() && cp.value("containerPort", 0) == ref.get<int64_t>())) {
        return cp.value("containerPort", int64_t{0});
      }
    }
  }
  return std::nullopt;
}

// The API server as deploy/network-policy names it: a peer in kube-system, narrowed to pods.
bool isApiServerPeer(const Json& peer) {
  const Json ns = peer.value("namespaceSelector", Json::object()).value("matchLabels", Json());
  const Json pods = peer.value("podSelector", Json::object()).value("matchLabels", Json());
  return !peer.contains("ipBlock") && ns == Json{{"kubernetes.io/metadata.name", "kube-system"}} &&
         pods.is_object() && !pods.empty() &&
         (pods == Json{{"component", "kube-apiserver"}} ||
          pods == Json{{"k8s-app", "konnectivity-agent"}});
}

TEST_P(NetworkPolicyTest, TheWebhookPortAdmitsTheApiServerOnlyAndEveryOtherPortStaysOpen) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  const Json& pod_labels = p.deployment["spec"]["template"]["metadata"]["labels"];
  std::vector<Json> policies;
  for (const Json& policy : ofKind(objects(), "NetworkPolicy")) {
    if (policy["metadata"].value("namespace", "") != p.ns) continue;
    const Json selector = policy["spec"]["podSelector"].value("matchLabels", Json::object());
    bool selects = true;
    for (const auto& [key, value] : selector.items()) {
      selects =
          selects && value.is_string() && pod_labels.value(key, "") == value.get<std::string>();
    }
    if (selects) policies.push_back(policy);
  }
  ASSERT_EQ(policies.size(), 1u) << "NetworkPolicies selecting shardscaler's pod";
  const Json& spec = policies[0]["spec"];
  EXPECT_NE(std::ranges::find(spec["policyTypes"], Json("Ingress")), spec["policyTypes"].end());
  const int64_t webhook = p.options.webhook_bind_address->port;

  std::set<int64_t> open_to_all;
  bool webhook_admitted = false;
  for (const Json& rule : spec.value("ingress", Json::array())) {
    const Json from = rule.value("from", Json::array());
    for (const Json& port : rule.value("ports", Json::array())) {
      const auto number = containerPort(p.pod_spec, port);
      if (!number) continue;  // a name this pod does not have (the operator's https, say)
      if (*number == webhook) {
        webhook_admitted = true;
        ASSERT_FALSE(from.empty()) << "the webhook port is open to anyone: " << rule;
        for (const Json& peer : from) EXPECT_TRUE(isApiServerPeer(peer)) << peer;
      } else if (from.empty()) {
        open_to_all.insert(*number);
      }
    }
    EXPECT_FALSE(rule.value("ports", Json::array()).empty())
        << "a rule without ports opens every port, the webhook's too: " << rule;
  }
  EXPECT_TRUE(webhook_admitted) << "the API server cannot reach port " << webhook;
  for (const Json& container : p.pod_spec.value("containers", Json::array())) {
    for (const Json& cp : container.value("ports", Json::array())) {
      const int64_t number = cp.value("containerPort", 0);
      if (number == webhook) continue;
      EXPECT_TRUE(open_to_all.contains(number))
          << "port " << cp << " of container " << container.value("name", "") << " is closed";
    }
  }
}

std::string installName(const ::testing::TestParamInfo<ShardscalerInstall>& info) {
  std::string name = info.param.dir;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Deploy, NetworkPolicyTest, ::testing::ValuesIn(shardscalerInstalls()),
                         installName);

TEST(NetworkPolicyReadmeTest, SaysWhereTheApiServerCannotBeSelected) {
  const std::string readme = readFile(deployDir() / "README.md");
  for (const char* needed : {"host network", "ipBlock", "managed control planes"}) {
    EXPECT_NE(readme.find(needed), std::string::npos) << needed;
  }
}

}  // namespace
}  // namespace shardscaler::deploy_test
