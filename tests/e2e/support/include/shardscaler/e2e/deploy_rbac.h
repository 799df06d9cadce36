// deploy/base's RBAC made fit for one test namespace, so that e2e tests run shardscaler with
// exactly the permissions deploy/ gives it. Header-only (it reads YAML with the deploy tests'
// header, which the e2e tests link yaml-cpp for); it applies nothing itself.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../../../../unit/deploy/yaml_json.h"
#include "shardscaler/e2e/cluster.h"

namespace shardscaler::e2e {

// The RBAC objects of deploy/base, with their namespace and their subjects' moved to `ns`, and
// "-<ns>" added to the names of the cluster-scoped ones so that tests do not share them.
inline std::vector<Json> renderedRbac(const std::string& ns) {
  static const std::set<std::string> kinds = {"ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                              "Role", "RoleBinding"};
  auto rendered = kubectl("kustomize " + (sourceDir() / "deploy/base").string());
  if (rendered.exit_code != 0) throw std::runtime_error("kubectl kustomize: " + rendered.err);
  std::vector<Json> out;
  for (Json& object : deploy_test::yamlStreamToJson(rendered.out)) {
    const std::string kind = object.value("kind", "");
    if (!kinds.contains(kind)) continue;
    Json& metadata = object["metadata"];
    if (kind.starts_with("Cluster")) {
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

// kubectl apply's input for the objects: one JSON document each.
inline std::string yamlStream(const std::vector<Json>& objects) {
  std::string out;
  for (const Json& o : objects) out += "---\n" + o.dump() + "\n";
  return out;
}

}  // namespace shardscaler::e2e
