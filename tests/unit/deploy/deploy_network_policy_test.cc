// Who may reach shardscaler's pods: no install restricts it by default (a NetworkPolicy that does
// not fit the cluster drops the API server's calls, and the guard fails closed). With one of the
// opt-in components deploy/components/network-policy-*, the webhook port (the shard guard and the
// external metrics API) admits only the API server as that variant reaches pods, and every other
// port of the pod (shardscaler's /metrics and probes, the operator's own in the sidecar install)
// stays open to anyone; and the shards' web port admits shardscaler, which reads their /metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

// An install with a variant, and the peer that variant admits to the webhook port.
struct PolicyCase {
  ShardscalerInstall install;
  std::string peer;  // "pod-network", "konnectivity" or "host-network"
};
std::ostream& operator<<(std::ostream& os, const PolicyCase& c) { return os << c.install; }

const std::vector<PolicyCase>& policyCases() {
  static const std::vector<PolicyCase> cases = {
      {{"examples/network-policy/host-network", "shardscaler"}, "host-network"},
      {{"examples/network-policy/konnectivity-sidecar", "prometheus-operator"}, "konnectivity"},
      {{"examples/network-policy/pod-network-namespaced", "shardscaler"}, "pod-network"},
  };
  return cases;
}

class NetworkPolicyTest : public ::testing::TestWithParam<PolicyCase> {
 protected:
  const std::vector<Json>& objects() const { return render(GetParam().install.dir).objects; }
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

// Whether a NetworkPolicy's podSelector (matchLabels, and matchExpressions with In) selects a pod
// with `labels`; an empty selector selects every pod.
bool selectsPod(const Json& selector, const Json& labels) {
  // Named locals: items() of a temporary would dangle in the loop.
  const Json match_labels = selector.value("matchLabels", Json::object());
  const Json match_expressions = selector.value("matchExpressions", Json::array());
  for (const auto& [key, value] : match_labels.items()) {
    if (labels.value(key, Json()) != value) return false;
  }
  for (const Json& e : match_expressions) {
    const Json values = e.value("values", Json::array());
    if (e.value("operator", "") != "In" ||
        std::ranges::find(values, labels.value(e.value("key", ""), Json())) == values.end()) {
      return false;
    }
  }
  return true;
}

// The API server as the variant names it: a peer in kube-system narrowed to the API server's pods
// or the Konnectivity agent's, or (host network) an ipBlock of the control plane's addresses.
bool isApiServerPeer(const Json& peer, const std::string& variant) {
  if (variant == "host-network") {
    return peer.size() == 1 && peer.contains("ipBlock") &&
           !peer["ipBlock"].value("cidr", "").empty() && !peer["ipBlock"].contains("except") &&
           peer["ipBlock"].value("cidr", "") != "0.0.0.0/0";
  }
  const Json ns = peer.value("namespaceSelector", Json::object()).value("matchLabels", Json());
  const Json pods = peer.value("podSelector", Json::object()).value("matchLabels", Json());
  const Json want = variant == "konnectivity" ? Json{{"k8s-app", "konnectivity-agent"}}
                                              : Json{{"component", "kube-apiserver"}};
  return !peer.contains("ipBlock") && ns == Json{{"kubernetes.io/metadata.name", "kube-system"}} &&
         pods == want;
}

TEST(NetworkPolicyDefaultsTest, NoInstallRestrictsWhoReachesItsPods) {
  for (const auto& install : shardscalerInstalls()) {
    EXPECT_TRUE(ofKind(render(install.dir).objects, "NetworkPolicy").empty())
        << "deploy/" << install.dir << " renders a NetworkPolicy: it must be opt-in";
  }
}

TEST_P(NetworkPolicyTest, TheWebhookPortAdmitsTheApiServerOnlyAndEveryOtherPortStaysOpen) {
  const ShardscalerPod p = shardscalerPod(GetParam().install);
  const Json& pod_labels = p.deployment["spec"]["template"]["metadata"]["labels"];
  std::vector<Json> policies;
  for (const Json& policy : ofKind(objects(), "NetworkPolicy")) {
    if (policy["metadata"].value("namespace", "") != p.ns) continue;
    if (selectsPod(policy["spec"]["podSelector"], pod_labels)) policies.push_back(policy);
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
        for (const Json& peer : from) {
          EXPECT_TRUE(isApiServerPeer(peer, GetParam().peer)) << GetParam().peer << ": " << peer;
        }
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

std::string installName(const ::testing::TestParamInfo<PolicyCase>& info) {
  std::string name = info.param.install.dir;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// Without a Prometheus URL shardscaler reads each shard pod's /metrics on its web port: with each
// variant, a shard pod of the operator (server or agent) admits shardscaler's pod there, and on no
// other port.
TEST_P(NetworkPolicyTest, TheShardsAdmitShardscalerOnTheirWebPortOnly) {
  const ShardscalerPod p = shardscalerPod(GetParam().install);
  const Json& shardscaler_labels = p.deployment["spec"]["template"]["metadata"]["labels"];
  for (const char* app : {"prometheus", "prometheus-agent"}) {
    const Json shard_labels = {{"app.kubernetes.io/managed-by", "prometheus-operator"},
                               {"app.kubernetes.io/name", app}};
    bool admitted = false;
    for (const Json& policy : ofKind(objects(), "NetworkPolicy")) {
      const Json& selector = policy["spec"]["podSelector"];
      if (selector.empty() || !selectsPod(selector, shard_labels)) continue;
      for (const Json& rule : policy["spec"].value("ingress", Json::array())) {
        const Json ports = rule.value("ports", Json::array());
        ASSERT_EQ(ports, Json::parse(R"([{"port":"web","protocol":"TCP"}])")) << policy.dump();
        for (const Json& peer : rule.value("from", Json::array())) {
          const Json pod_selector = peer.value("podSelector", Json::object());
          const bool matches = peer.contains("namespaceSelector") && !peer.contains("ipBlock") &&
                               !pod_selector.empty() &&
                               selectsPod(pod_selector, shardscaler_labels);
          admitted = admitted || matches;
        }
      }
    }
    EXPECT_TRUE(admitted) << GetParam().peer << ": no NetworkPolicy admits shardscaler to a " << app
                          << " shard's web port";
  }
}

INSTANTIATE_TEST_SUITE_P(Deploy, NetworkPolicyTest, ::testing::ValuesIn(policyCases()),
                         installName);

// Each variant component is the one its example adds, and the host-network one cannot be used
// unchanged by accident: its ipBlock matches no API server until it is replaced.
TEST(NetworkPolicyComponentsTest, EveryVariantHasAnExampleAndTheHostNetworkOneNeedsYourAddresses) {
  for (const char* variant : {"pod-network", "konnectivity", "host-network"}) {
    const std::string component = "network-policy-" + std::string(variant);
    EXPECT_TRUE(
        std::filesystem::exists(deployDir() / "components" / component / "kustomization.yaml"))
        << component;
    EXPECT_TRUE(std::ranges::any_of(
        policyCases(),
        [&](const PolicyCase& c) {
          return c.peer == variant &&
                 readFile(deployDir() / c.install.dir / "kustomization.yaml").find(component) !=
                     std::string::npos;
        }))
        << "no example adds " << component;
  }
  const std::string host =
      readFile(deployDir() / "components/network-policy-host-network/kustomization.yaml");
  EXPECT_NE(host.find("cidr: 192.0.2.0/24"), std::string::npos);
}

TEST(NetworkPolicyReadmeTest, SaysWhereTheApiServerCannotBeSelected) {
  const std::string readme = readFile(deployDir() / "README.md");
  for (const char* needed : {"host network", "ipBlock", "managed control planes"}) {
    EXPECT_NE(readme.find(needed), std::string::npos) << needed;
  }
}

}  // namespace
}  // namespace shardscaler::deploy_test
