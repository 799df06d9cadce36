// deploy/'s identities and RBAC made fit for one test namespace, so that e2e tests run shardscaler
// (and the operator) with exactly the identities and permissions deploy/ gives them. Header-only
// (it reads YAML with the deploy tests' header, which the e2e tests link yaml-cpp for); it applies
// nothing itself.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../../../../unit/deploy/yaml_json.h"
#include "shardscaler/e2e/cluster.h"

namespace shardscaler::e2e {

// The identity objects of the rendering of deploy/<dir>: ServiceAccounts, their token Secrets and
// the RBAC, with their namespace and their subjects' moved to `ns`, and "-<ns>" added to the names
// of the cluster-scoped ones so that tests do not share them. A binding that deploy/ puts in
// kube-system (the front proxy's ConfigMap can only be read there) stays there, its name suffixed.
inline std::vector<Json> renderedIdentities(const std::string& dir, const std::string& ns) {
  static const std::set<std::string> kinds = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                              "Role",           "RoleBinding", "Secret"};
  auto rendered = kubectl("kustomize " + (sourceDir() / "deploy" / dir).string());
  if (rendered.exit_code != 0) throw std::runtime_error("kubectl kustomize: " + rendered.err);
  std::vector<Json> out;
  for (Json& object : deploy_test::yamlStreamToJson(rendered.out)) {
    const std::string kind = object.value("kind", "");
    if (!kinds.contains(kind)) continue;
    if (kind == "Secret" && object.value("type", "") != "kubernetes.io/service-account-token") {
      continue;
    }
    Json& metadata = object["metadata"];
    if (kind.starts_with("Cluster") || metadata.value("namespace", "") == "kube-system") {
      metadata["name"] = metadata.value("name", "") + "-" + ns;
    } else {
      metadata["namespace"] = ns;
    }
    if (kind.ends_with("Binding")) {
      for (Json& subject : object["subjects"]) subject["namespace"] = ns;
      if (object["roleRef"].value("kind", "") == "ClusterRole") {
        object["roleRef"]["name"] = object["roleRef"].value("name", "") + "-" + ns;
      }
    }
    out.push_back(std::move(object));
  }
  return out;
}

// deploy/base's RBAC and ServiceAccount, as renderedIdentities makes them fit for `ns`.
inline std::vector<Json> renderedRbac(const std::string& ns) {
  return renderedIdentities("base", ns);
}

// Every rule that names `from` in its resourceNames names `to` instead (a test's own webhook
// configuration, say, for the one deploy/ names).
inline void renameResource(std::vector<Json>& objects, const std::string& from,
                           const std::string& to) {
  for (Json& object : objects) {
    if (object.contains("rules")) {
      for (Json& rule : object["rules"]) {
        if (!rule.contains("resourceNames")) continue;
        for (Json& name : rule["resourceNames"]) {
          if (name == from) name = to;
        }
      }
    }
  }
}

// The names of the cluster-scoped objects, as `kind/name` for kubectl delete.
inline std::vector<std::string> clusterScoped(const std::vector<Json>& objects) {
  std::vector<std::string> out;
  for (const Json& object : objects) {
    const std::string kind = object.value("kind", "");
    if (kind.starts_with("Cluster"))
      out.push_back(kind + "/" + object["metadata"].value("name", ""));
  }
  return out;
}

// The args of the container named "shardscaler" in the rendering of deploy/<dir>: what an install
// runs shardscaler with.
inline std::vector<std::string> renderedArgs(const std::string& dir) {
  auto rendered = kubectl("kustomize " + (sourceDir() / "deploy" / dir).string());
  if (rendered.exit_code != 0) throw std::runtime_error("kubectl kustomize: " + rendered.err);
  for (const Json& object : deploy_test::yamlStreamToJson(rendered.out)) {
    if (object.value("kind", "") != "Deployment") continue;
    for (const Json& c : object["spec"]["template"]["spec"]["containers"]) {
      if (c.value("name", "") == "shardscaler") return c.value("args", std::vector<std::string>{});
    }
  }
  throw std::runtime_error("deploy/" + dir + " runs no shardscaler container");
}

// kubectl apply's input for the objects: one JSON document each.
inline std::string yamlStream(const std::vector<Json>& objects) {
  std::string out;
  for (const Json& o : objects) out += "---\n" + o.dump() + "\n";
  return out;
}

}  // namespace shardscaler::e2e
