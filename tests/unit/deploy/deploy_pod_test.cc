// The pods deploy/ renders meet the restricted Pod Security level, run shardscaler with flags it
// accepts, probe the endpoints it serves on the ports it listens on, and set requests and limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

class PodTest : public ::testing::TestWithParam<ShardscalerInstall> {};

const Json& at(const Json& j, const char* key) {
  static const Json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

// The Pod Security Standards, "restricted" profile (Kubernetes 1.25+), for one container in its
// pod; container settings override the pod's.
void expectRestricted(const Json& pod, const Json& container) {
  const std::string name = container.value("name", "");
  SCOPED_TRACE("container " + name);
  const Json& pod_sc = at(pod, "securityContext");
  const Json& sc = at(container, "securityContext");
  auto effective = [&](const char* key) -> const Json& {
    return sc.is_object() && sc.contains(key) ? sc[key] : at(pod_sc, key);
  };
  EXPECT_EQ(effective("runAsNonRoot"), Json(true));
  if (!effective("runAsUser").is_null()) {
    EXPECT_NE(effective("runAsUser"), Json(0));
  }
  const Json& seccomp = effective("seccompProfile");
  EXPECT_TRUE(seccomp.is_object() && (seccomp.value("type", "") == "RuntimeDefault" ||
                                      seccomp.value("type", "") == "Localhost"))
      << seccomp;
  EXPECT_EQ(at(sc, "allowPrivilegeEscalation"), Json(false));
  EXPECT_NE(at(sc, "privileged"), Json(true));
  const Json& caps = at(sc, "capabilities");
  EXPECT_NE(std::ranges::find(at(caps, "drop"), Json("ALL")), at(caps, "drop").end())
      << "capabilities.drop must hold ALL: " << caps;
  for (const Json& added : at(caps, "add")) {
    EXPECT_EQ(added, Json("NET_BIND_SERVICE"));
  }
  for (const Json& port : at(container, "ports")) {
    EXPECT_FALSE(port.contains("hostPort")) << port;
  }
  EXPECT_FALSE(sc.contains("procMount") || sc.contains("seLinuxOptions") ||
               sc.contains("windowsOptions"))
      << sc;
}

TEST_P(PodTest, MeetsTheRestrictedPodSecurityLevel) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
    EXPECT_NE(at(p.pod_spec, host), Json(true)) << host;
  }
  const std::set<std::string> allowed_volumes = {"configMap", "csi",       "downwardAPI",
                                                 "emptyDir",  "ephemeral", "persistentVolumeClaim",
                                                 "projected", "secret"};
  for (const Json& volume : at(p.pod_spec, "volumes")) {
    for (const auto& [key, value] : volume.items()) {
      EXPECT_TRUE(key == "name" || allowed_volumes.contains(key)) << "volume type " << key;
    }
  }
  EXPECT_FALSE(at(p.pod_spec, "securityContext").contains("sysctls"));
  for (const char* list : {"initContainers", "containers"}) {
    for (const Json& c : at(p.pod_spec, list)) expectRestricted(p.pod_spec, c);
  }
  // Beyond the level: shardscaler writes no files.
  EXPECT_EQ(at(at(p.container, "securityContext"), "readOnlyRootFilesystem"), Json(true));
}

// The port a probe or endpoint refers to, by number or by the container's port name.
int64_t portNumber(const Json& container, const Json& port) {
  if (port.is_number()) return port.get<int64_t>();
  for (const Json& p : at(container, "ports")) {
    if (p.value("name", "") == port.get<std::string>()) return p.value("containerPort", -1);
  }
  return -1;
}

TEST_P(PodTest, ArgsAreShardscalersFlagsAndProbesHitItsEndpoints) {
  const ShardscalerPod p = shardscalerPod(GetParam());  // throws if the parser rejects an arg
  ASSERT_TRUE(p.options.metrics_bind_address);
  ASSERT_TRUE(p.options.health_probe_bind_address);
  const int64_t metrics = p.options.metrics_bind_address->port;
  const int64_t probes = p.options.health_probe_bind_address->port;
  std::set<int64_t> declared;
  for (const Json& port : at(p.container, "ports")) declared.insert(port.value("containerPort", 0));
  EXPECT_TRUE(declared.contains(metrics)) << "the metrics port " << metrics << " is not declared";
  EXPECT_TRUE(declared.contains(probes)) << "the probe port " << probes << " is not declared";

  const Json& liveness = at(p.container, "livenessProbe");
  ASSERT_TRUE(liveness.is_object()) << "no liveness probe";
  EXPECT_EQ(liveness["httpGet"].value("path", ""), "/healthz");
  EXPECT_EQ(portNumber(p.container, liveness["httpGet"]["port"]), probes);
  if (const Json& readiness = at(p.container, "readinessProbe"); readiness.is_object()) {
    EXPECT_EQ(readiness["httpGet"].value("path", ""), "/readyz");
    EXPECT_EQ(portNumber(p.container, readiness["httpGet"]["port"]), probes);
  } else {
    // Only as a sidecar, where shardscaler must not gate the operator's readiness.
    EXPECT_NE(p.deployment["metadata"]["name"], "shardscaler") << "no readiness probe";
  }
  EXPECT_TRUE(p.options.leader_elect) << "two pods (a rollout) would both act";
}

// spec.ingestion.prometheusURL is written by whoever may create a ShardSet: deploy/ names the
// Prometheus servers shardscaler may query rather than leave it to the binary's default, and no
// entry lets a ShardSet name any host.
TEST_P(PodTest, NamesThePrometheusServersShardscalerMayQuery) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  const Json& args = at(p.container, "args");
  EXPECT_TRUE(std::ranges::any_of(args, [](const Json& a) {
    return a.is_string() && a.get<std::string>().starts_with("--prometheus-url-allow=");
  })) << args;
  EXPECT_FALSE(p.options.prometheus_url_allow.empty());
  for (const std::string& pattern : p.options.prometheus_url_allow) {
    const std::string host = pattern.substr(pattern.find("://") + 3);
    EXPECT_FALSE(host.starts_with("*:") || host.starts_with("*/") || host == "*") << pattern;
  }
  EXPECT_EQ(p.options.prometheus_url_allow_regex, "");
  auto policy = ingestion::PrometheusUrlPolicy::make(p.options.prometheus_url_allow,
                                                     p.options.prometheus_url_allow_regex);
  ASSERT_TRUE(policy.has_value()) << policy.error();
  EXPECT_EQ(policy->refusal("http://prometheus-operated.monitoring.svc:9090"), std::nullopt);
  EXPECT_NE(policy->refusal("http://169.254.169.254/latest"), std::nullopt);
}

TEST_P(PodTest, NoTwoContainersOfThePodShareAPort) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  std::map<int64_t, std::string> owner;
  for (const Json& c : at(p.pod_spec, "containers")) {
    for (const Json& port : at(c, "ports")) {
      const int64_t n = port.value("containerPort", 0);
      auto [it, fresh] = owner.emplace(n, c.value("name", ""));
      EXPECT_TRUE(fresh) << "port " << n << " of " << c["name"] << " is " << it->second << "'s";
    }
  }
}

TEST_P(PodTest, SetsRequestsAndLimits) {
  const ShardscalerPod p = shardscalerPod(GetParam());
  const Json& resources = at(p.container, "resources");
  for (const char* kind : {"requests", "limits"}) {
    for (const char* resource : {"cpu", "memory"}) {
      EXPECT_TRUE(at(at(resources, kind), resource).is_string()) << kind << "." << resource;
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

INSTANTIATE_TEST_SUITE_P(Deploy, PodTest, ::testing::ValuesIn(shardscalerInstalls()), installName);

TEST(StandaloneTest, TwoReplicasShareTheLeaseInTheirNamespace) {
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[0]);
  EXPECT_GE(p.deployment["spec"].value("replicas", 1), 2);
  EXPECT_EQ(p.options.leader_election_namespace, p.ns);
  auto ns = find(render("base").objects, "Namespace", p.ns);
  ASSERT_TRUE(ns) << "deploy/base renders no Namespace " << p.ns;
  EXPECT_EQ((*ns)["metadata"]["labels"].value("pod-security.kubernetes.io/enforce", ""),
            "restricted");
}

TEST(SidecarTest, AppendsShardscalerAndLeavesTheOperatorContainerAlone) {
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[2]);
  const auto input = yamlDocuments(readFile(
      deployDir() / "overlays/prometheus-operator-sidecar/prometheus_operator_deployment.yaml"));
  ASSERT_EQ(input.size(), 1u);
  const Json& original = input[0]["spec"]["template"]["spec"];
  const Json& containers = p.pod_spec["containers"];
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(containers[0], original["containers"][0]) << "the operator's container changed";
  EXPECT_EQ(containers[1]["name"], "shardscaler") << "shardscaler is not appended last";
  // The pod gains shardscaler's two volumes (mounted by its container only), nothing else.
  Json pod_without_containers = p.pod_spec;
  Json original_without_containers = original;
  pod_without_containers.erase("containers");
  original_without_containers.erase("containers");
  Json added_volumes = Json::array();
  for (const Json& volume : pod_without_containers.value("volumes", Json::array())) {
    const auto& before = original_without_containers.value("volumes", Json::array());
    if (std::ranges::find(before, volume) == before.end()) added_volumes.push_back(volume["name"]);
  }
  EXPECT_EQ(added_volumes, Json::array({"shardscaler-token", "shardscaler-kubeconfig"}));
  pod_without_containers.erase("volumes");
  original_without_containers.erase("volumes");
  EXPECT_EQ(pod_without_containers, original_without_containers) << "the operator's pod changed";
  EXPECT_EQ(p.service_account, "prometheus-operator");
  const auto& objects = render("overlays/prometheus-operator-sidecar").objects;
  EXPECT_FALSE(find(objects, "Deployment", "shardscaler")) << "the standalone Deployment too";
  EXPECT_FALSE(find(objects, "Namespace", "shardscaler-system"));
}

// The operator's pod runs as the operator's ServiceAccount. Were shardscaler to use that token, the
// API server would authenticate both as one user and the shard guard could not tell the
// operator's writes from shardscaler's: shardscaler acts as its own ServiceAccount, through a
// token that only its container mounts.
TEST(SidecarTest, ShardscalerActsAsItsOwnServiceAccountNotTheOperators) {
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[2]);
  EXPECT_EQ(p.identity, "shardscaler");
  EXPECT_NE(p.identity, p.service_account);
  const Json& operator_container = p.pod_spec["containers"][0];
  for (const Json& mount : operator_container.value("volumeMounts", Json::array())) {
    EXPECT_NE(mount.value("name", ""), "shardscaler-token") << "the operator can read the token";
  }
  const auto& objects = render("overlays/prometheus-operator-sidecar").objects;
  auto account = find(objects, "ServiceAccount", "shardscaler");
  ASSERT_TRUE(account);
  EXPECT_FALSE(account->value("automountServiceAccountToken", true));
  // The kubeconfig trusts the CA that comes with the token.
  auto map = find(objects, "ConfigMap", "shardscaler-kubeconfig");
  ASSERT_TRUE(map);
  const auto kubeconfig = yamlDocuments((*map)["data"]["kubeconfig"].get<std::string>());
  ASSERT_EQ(kubeconfig.size(), 1u);
  EXPECT_EQ(kubeconfig[0]["clusters"][0]["cluster"].value("certificate-authority", ""),
            "/var/run/secrets/shardscaler/ca.crt");
}

TEST(NamespacedTest, WatchesOnlyItsOwnNamespace) {
  const ShardscalerPod p = shardscalerPod(shardscalerInstalls()[1]);
  EXPECT_EQ(p.options.namespaces, std::vector<std::string>{p.ns});
  EXPECT_FALSE(find(render("overlays/namespaced").objects, "Namespace", p.ns))
      << "the overlay must not take over an existing namespace's labels";
}

}  // namespace
}  // namespace shardscaler::deploy_test
