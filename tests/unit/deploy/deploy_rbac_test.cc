// The RBAC that deploy/ renders gives shardscaler's ServiceAccount exactly the API calls
// shardscaler makes, in the scope its flags ask for, and nothing with wildcards or escalation.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "shardscaler_pod.h"

namespace shardscaler::deploy_test {
namespace {

// One permission: verb on group/resource, in a namespace ("" = every namespace), on one name
// ("" = any).
struct Grant {
  std::string scope;
  std::string group;
  std::string resource;
  std::string verb;
  std::string name;
  auto operator<=>(const Grant&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Grant& g) {
  return os << (g.scope.empty() ? "<cluster>" : g.scope) << ": " << g.verb << " "
            << (g.group.empty() ? "core" : g.group) << "/" << g.resource
            << (g.name.empty() ? "" : " [" + g.name + "]");
}

// The calls of scaler/controller/src/shard_set_controller.cc, plan_applier.cc,
// k8s-client/src/event_recorder.cc (as the controller uses it) and
// scaler/ingestion/src/shard_pod_reader.cc (the shards' pods).
struct ControllerCall {
  const char* group;
  const char* resource;
  std::vector<const char*> verbs;
};
const std::vector<ControllerCall>& controllerCalls() {
  static const std::vector<ControllerCall> calls = {
      {"shardscaler.io", "shardsets", {"get", "list", "watch", "patch"}},
      {"shardscaler.io", "shardsets/status", {"patch"}},
      {"monitoring.coreos.com", "prometheuses", {"get", "list", "watch", "patch"}},
      {"monitoring.coreos.com", "prometheusagents", {"get", "list", "watch", "patch"}},
      // planner/src/patches.cc: a re-attach sets blockOwnerDeletion on the target's reference.
      {"monitoring.coreos.com", "prometheuses/finalizers", {"update"}},
      {"monitoring.coreos.com", "prometheusagents/finalizers", {"update"}},
      {"apps", "statefulsets", {"get", "list", "watch", "patch", "delete"}},
      {"", "pods", {"list"}},
      {"autoscaling", "horizontalpodautoscalers", {"list"}},
      {"", "events", {"create", "patch"}},
      // scaler/controller/src/scrape_objects_reader.cc (spec.resharding LowChurn).
      {"monitoring.coreos.com", "servicemonitors", {"list"}},
      {"monitoring.coreos.com", "podmonitors", {"list"}},
      {"monitoring.coreos.com", "probes", {"list"}},
      {"monitoring.coreos.com", "scrapeconfigs", {"list"}},
  };
  return calls;
}

std::set<Grant> expectedGrants(const app::RunOptions& options) {
  std::set<Grant> out;
  std::vector<std::string> scopes = options.namespaces;
  if (scopes.empty()) scopes.emplace_back();
  for (const auto& scope : scopes) {
    for (const auto& call : controllerCalls()) {
      for (const char* verb : call.verbs) out.insert({scope, call.group, call.resource, verb, ""});
    }
  }
  // scaler/controller/src/scrape_objects_reader.cc: the namespaces a target's namespace selector
  // picks. Namespaces are cluster-scoped: a Role's grant (the namespaced overlay repeats the
  // ClusterRole) lists none, and such a selector then reads as a failed read.
  for (const auto& scope : scopes) out.insert({scope, "", "namespaces", "list", ""});
  if (options.webhook_bind_address) {
    // guard/src: the namespace of a StatefulSet the garbage collector or the namespace
    // controller deletes (ShardSets and targets are read with the controller's get).
    for (const auto& scope : scopes) out.insert({scope, "", "namespaces", "get", ""});
    // scaler/guard/src/self_identity.cc: a TokenReview of its own token, unless the user is given.
    if (options.guard_self_user.empty()) {
      out.insert({"", "authentication.k8s.io", "tokenreviews", "create", ""});
    }
    const auto& webhook = options.webhook_configuration;
    out.insert(
        {"", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "get", webhook});
    if (options.webhook_cert_dir.empty()) {
      // certificates/: the caBundle injected with a JSON patch; the certificate Secret created
      // once, read and updated by name.
      out.insert({"", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "patch",
                  webhook});
      const auto& ns = options.webhook_cert_secret_namespace;
      out.insert({ns, "", "secrets", "get", options.webhook_cert_secret});
      out.insert({ns, "", "secrets", "update", options.webhook_cert_secret});
      out.insert({ns, "", "secrets", "create", ""});
    }
  }
  if (options.external_metrics_api) {
    // system:auth-delegator (built in): SubjectAccessReviews of the callers
    // (scaler/metrics-api/src/metrics_api_handler.cc), and TokenReviews.
    out.insert({"", "authentication.k8s.io", "tokenreviews", "create", ""});
    out.insert({"", "authorization.k8s.io", "subjectaccessreviews", "create", ""});
    // extension-apiserver-authentication-reader (built in): front_proxy_config_watch.cc.
    for (const char* verb : {"get", "list", "watch"}) {
      out.insert({"kube-system", "", "configmaps", verb, "extension-apiserver-authentication"});
    }
    // scaler/app/src/metrics_api_server.cc watches the APIService by name; certificates/
    // injects its caBundle unless the certificates come from a directory.
    const std::string api_service = "v1beta1.external.metrics.k8s.io";
    out.insert({"", "apiregistration.k8s.io", "apiservices", "list", api_service});
    out.insert({"", "apiregistration.k8s.io", "apiservices", "watch", api_service});
    if (options.webhook_cert_dir.empty()) {
      out.insert({"", "apiregistration.k8s.io", "apiservices", "get", api_service});
      out.insert({"", "apiregistration.k8s.io", "apiservices", "patch", api_service});
    }
    // scaler/app/src/metrics_api_server.cc creates it where none exists (a create names
    // no object in its URL, so it cannot be limited by name); its owner is the webhook
    // configuration, read with the guard's get.
    if (options.register_api_service) {
      out.insert({"", "apiregistration.k8s.io", "apiservices", "create", ""});
    }
  }
  if (options.leader_elect) {
    // k8s-client/src/leader_elector.cc: get and update by name, create without one.
    const auto& ns = options.leader_election_namespace;
    const auto& lease = options.leader_election_id;
    out.insert({ns, "coordination.k8s.io", "leases", "get", lease});
    out.insert({ns, "coordination.k8s.io", "leases", "update", lease});
    out.insert({ns, "coordination.k8s.io", "leases", "create", ""});
  }
  return out;
}

void addRules(const Json& role, const std::string& scope, std::set<Grant>& out) {
  for (const Json& rule : role.value("rules", Json::array())) {
    auto names = rule.value("resourceNames", Json::array());
    if (names.empty()) names.push_back("");
    for (const Json& group : rule.value("apiGroups", Json::array())) {
      for (const Json& resource : rule.value("resources", Json::array())) {
        for (const Json& verb : rule.value("verbs", Json::array())) {
          for (const Json& name : names) out.insert({scope, group, resource, verb, name});
        }
      }
    }
  }
}

bool bindsTo(const Json& binding, const std::string& ns, const std::string& service_account) {
  for (const Json& s : binding.value("subjects", Json::array())) {
    if (s.value("kind", "") == "ServiceAccount" && s.value("name", "") == service_account &&
        s.value("namespace", "") == ns) {
      return true;
    }
  }
  return false;
}

// The roles every cluster has (kube-apiserver's bootstrap policy) that deploy/ binds to, with the
// rules of theirs that matter here.
std::optional<Json> builtInRole(const std::string& kind, const std::string& name) {
  if (kind == "ClusterRole" && name == "system:auth-delegator") {
    return Json::parse(R"({"rules":[
      {"apiGroups":["authentication.k8s.io"],"resources":["tokenreviews"],"verbs":["create"]},
      {"apiGroups":["authorization.k8s.io"],"resources":["subjectaccessreviews"],
       "verbs":["create"]}]})");
  }
  if (kind == "Role" && name == "extension-apiserver-authentication-reader") {
    return Json::parse(R"({"metadata":{"namespace":"kube-system"},"rules":[
      {"apiGroups":[""],"resources":["configmaps"],
       "resourceNames":["extension-apiserver-authentication"],"verbs":["get","list","watch"]}]})");
  }
  return std::nullopt;
}

// What the rendering grants the ServiceAccount, through its bindings.
std::set<Grant> grantsOf(const std::vector<Json>& objects, const std::string& ns,
                         const std::string& service_account) {
  std::set<Grant> out;
  for (const char* kind : {"ClusterRoleBinding", "RoleBinding"}) {
    for (const Json& binding : ofKind(objects, kind)) {
      if (!bindsTo(binding, ns, service_account)) continue;
      const std::string scope =
          std::string(kind) == "RoleBinding" ? binding["metadata"].value("namespace", "") : "";
      const Json& ref = binding["roleRef"];
      auto role = find(objects, ref.value("kind", ""), ref.value("name", ""));
      if (!role) role = builtInRole(ref.value("kind", ""), ref.value("name", ""));
      EXPECT_TRUE(role) << kind << " " << binding["metadata"]["name"] << " refers to a missing "
                        << ref;
      if (!role) continue;
      if (ref.value("kind", "") == "Role") {
        EXPECT_EQ((*role)["metadata"].value("namespace", ""), scope)
            << "Role " << ref["name"] << " is not in the namespace of its RoleBinding";
      }
      addRules(*role, scope, out);
    }
  }
  return out;
}

class RbacTest : public ::testing::TestWithParam<ShardscalerInstall> {};

TEST_P(RbacTest, GrantsExactlyTheCallsShardscalerMakes) {
  const ShardscalerPod pod = shardscalerPod(GetParam());
  const auto granted = grantsOf(render(GetParam().dir).objects, pod.ns, pod.identity);
  const auto expected = expectedGrants(pod.options);
  std::vector<Grant> missing, extra;
  std::ranges::set_difference(expected, granted, std::back_inserter(missing));
  std::ranges::set_difference(granted, expected, std::back_inserter(extra));
  EXPECT_TRUE(missing.empty()) << "ServiceAccount " << pod.ns << "/" << pod.identity << " lacks "
                               << ::testing::PrintToString(missing);
  EXPECT_TRUE(extra.empty()) << "ServiceAccount " << pod.ns << "/" << pod.identity
                             << " gets more than it uses: " << ::testing::PrintToString(extra);
}

TEST_P(RbacTest, ServiceAccountIsRenderedOrComesWithTheOperator) {
  const ShardscalerPod pod = shardscalerPod(GetParam());
  auto sa = find(render(GetParam().dir).objects, "ServiceAccount", pod.identity);
  ASSERT_TRUE(sa) << "no ServiceAccount " << pod.identity;
  EXPECT_EQ((*sa)["metadata"].value("namespace", ""), pod.ns);
}

std::string installName(const ::testing::TestParamInfo<ShardscalerInstall>& info) {
  std::string name = info.param.dir;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Deploy, RbacTest, ::testing::ValuesIn(shardscalerInstalls()), installName);

TEST(RbacRulesTest, NoWildcardsNoEscalationNoNonResourceUrls) {
  const std::set<std::string> allowed_verbs = {"get",    "list",  "watch", "create",
                                               "update", "patch", "delete"};
  for (const auto& dir : kustomizationDirs()) {
    for (const char* kind : {"ClusterRole", "Role"}) {
      for (const Json& role : ofKind(render(dir).objects, kind)) {
        SCOPED_TRACE("deploy/" + dir + " " + kind + " " + role["metadata"].value("name", ""));
        EXPECT_FALSE(role.contains("aggregationRule")) << "aggregates other roles";
        for (const Json& rule : role.value("rules", Json::array())) {
          EXPECT_FALSE(rule.contains("nonResourceURLs")) << rule;
          for (const char* field : {"apiGroups", "resources", "verbs", "resourceNames"}) {
            for (const Json& v : rule.value(field, Json::array())) {
              const std::string s = v;
              EXPECT_EQ(s.find('*'), std::string::npos) << field << " " << s;
            }
          }
          for (const Json& verb : rule.value("verbs", Json::array())) {
            EXPECT_TRUE(allowed_verbs.contains(verb)) << "verb " << verb;
          }
          EXPECT_FALSE(rule.value("resources", Json::array()).empty()) << rule;
        }
      }
    }
  }
}

TEST(RbacRulesTest, NamespacedRoleRepeatsTheClusterRole) {
  auto cluster_role = find(render("base").objects, "ClusterRole", "shardscaler");
  auto role = find(render("overlays/namespaced").objects, "Role", "shardscaler");
  ASSERT_TRUE(cluster_role);
  ASSERT_TRUE(role);
  EXPECT_EQ((*role)["rules"], (*cluster_role)["rules"])
      << "deploy/overlays/namespaced/role.yaml and deploy/rbac/cluster_role.yaml differ";
  EXPECT_FALSE(find(render("overlays/namespaced").objects, "ClusterRole", "shardscaler"));
  EXPECT_FALSE(find(render("overlays/namespaced").objects, "ClusterRoleBinding", "shardscaler"));
}

}  // namespace
}  // namespace shardscaler::deploy_test
