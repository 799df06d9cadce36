// Builders of admission requests, the guard's shapes of the test objects, and fakes of the guard's
// live reads and of the KubeClient, for the guard's unit tests. Test-only; no I/O, no clock.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/guard/admission_review.h"
#include "shardscaler/guard/live_objects.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/test_objects/names.h"
#include "shardscaler/test_objects/shard_json.h"
#include "shardscaler/test_objects/shard_set_json.h"
#include "shardscaler/test_objects/target_json.h"

namespace shardscaler::guard::testing {

using Json = nlohmann::json;
using std::chrono::system_clock;

using test_objects::fixedNow;
using test_objects::kNamespace;
using test_objects::shardName;
// A ShardSet for the guard's rules without a drain: one without drain fields opts out
// (drain.enabled: false) here, so that those rules are judged alone; the drain's own rules, on by
// default, are GuardDrain's, which give drain fields or build the ShardSet with test_objects.
inline Json shardSetJson(int64_t shards, const Json& spec_patch = Json::object()) {
  Json patch = spec_patch.is_object() ? spec_patch : Json::object();
  Json& retention = patch["shardRetentionPolicy"];
  if (!retention.is_object() || !retention.contains("drain")) {
    retention["drain"] = {{"enabled", false}};
  }
  return test_objects::shardSetJson(shards, patch);
}

// The guard's shards: no uid, resourceVersion, owner reference or managed-by label.
inline const test_objects::ShardShape kGuardShard{.target_uid = std::nullopt,
                                                  .managed_by_operator = false,
                                                  .uid_prefix = "",
                                                  .resource_version_base = std::nullopt};
// The guard's target: its own uid; no resourceVersion, generation or claim.
inline const test_objects::TargetShape kGuardTarget{
    .uid = "uid-prom-main", .resource_version = "", .generation = std::nullopt, .claimed_by = ""};

// An active shard of Prometheus main managed by ShardSet main, as the operator and shardscaler
// label it.
inline Json activeShard(int index) { return test_objects::attachedShard(index, kGuardShard); }

// A retained (detached) shard with the given deadline annotation (nullopt: none).
inline Json retainedShard(int index, const std::optional<std::string>& deadline) {
  Json s = test_objects::retainedShard(index, deadline.value_or(""), kGuardShard);
  s["metadata"]["annotations"][api::kDetachedAtAnnotation] = "2026-11-21T10:00:00Z";
  return s;
}

// The owner references a shard carries, which the garbage collector follows: the target's (set by
// the operator on every shard it creates, kept by a detach before the ShardSet took it over), or
// the ShardSet's (moved there by a detach).
inline Json ownedByTarget(Json shard) {
  shard["metadata"]["ownerReferences"] = Json::array({{{"apiVersion", "monitoring.coreos.com/v1"},
                                                       {"kind", "Prometheus"},
                                                       {"name", "main"},
                                                       {"uid", "uid-prom-main"},
                                                       {"controller", true},
                                                       {"blockOwnerDeletion", true}}});
  return shard;
}
inline Json ownedByShardSet(Json shard) {
  shard["metadata"]["ownerReferences"] =
      Json::array({{{"apiVersion", std::string(api::kApiVersion)},
                    {"kind", std::string(api::kShardSetKind)},
                    {"name", "main"},
                    {"uid", "uid-shardset-main"},
                    {"controller", true}}});
  return shard;
}

inline Json unmanagedStatefulSet() {
  return {{"metadata", {{"name", "web"}, {"namespace", kNamespace}, {"labels", {{"app", "web"}}}}}};
}

inline UserInfo plainUser() { return {"user-1", {"system:authenticated"}}; }
inline UserInfo operatorUser() {
  return {"system:serviceaccount:monitoring:prometheus-operator",
          {"system:serviceaccounts", "system:authenticated"}};
}
inline UserInfo admin() { return {"kubernetes-admin", {"system:masters", "system:authenticated"}}; }
inline UserInfo garbageCollector() {
  return {"system:serviceaccount:kube-system:generic-garbage-collector",
          {"system:serviceaccounts", "system:authenticated"}};
}

inline AdmissionRequest deleteRequest(const Json& old_object, UserInfo user = plainUser()) {
  AdmissionRequest r;
  r.uid = "0c8f5a4e-uid";
  r.group = "apps";
  r.version = "v1";
  r.resource = "statefulsets";
  r.ns = kNamespace;
  const Json* name = old_object.contains("metadata") && old_object["metadata"].contains("name")
                         ? &old_object["metadata"]["name"]
                         : nullptr;
  r.name = name != nullptr && name->is_string() ? name->get<std::string>() : "";
  r.operation = Operation::Delete;
  r.user = std::move(user);
  r.old_object = old_object;
  return r;
}

inline AdmissionRequest updateRequest(const Json& old_object, const Json& object,
                                      UserInfo user = operatorUser()) {
  AdmissionRequest r = deleteRequest(old_object, std::move(user));
  r.operation = Operation::Update;
  r.object = object;
  return r;
}

// What the operator's CreateStatefulSetOrPatchLabels or a stale update does to a retained shard:
// its labels come back, shardscaler's stay.
inline Json relabelled(Json shard) {
  shard["metadata"]["labels"]["operator.prometheus.io/name"] = "main";
  return shard;
}

inline Json targetJson(std::optional<int64_t> shards, const Json& spec_patch = Json::object()) {
  return test_objects::targetJson(shards, spec_patch, kGuardTarget);
}

inline Json namespaceJson(bool terminating) {
  Json j{{"metadata", {{"name", kNamespace}}}, {"status", {{"phase", "Active"}}}};
  if (terminating) {
    j["metadata"]["deletionTimestamp"] = "2026-11-22T09:59:00Z";
    j["status"]["phase"] = "Terminating";
  }
  return j;
}

// Answers each read from what the test set, and counts the reads.
class FakeLiveObjects final : public LiveObjects {
 public:
  LiveRead shard_set = LiveRead::absent();
  LiveRead target_object = LiveRead::absent();
  LiveRead namespace_object = LiveRead::found(namespaceJson(false));
  std::vector<std::string> reads;  // "shardset monitoring/main", "target Prometheus main", ...

  LiveRead shardSet(const std::string& ns, const std::string& name) override {
    reads.push_back("shardset " + ns + "/" + name);
    return shard_set;
  }
  LiveRead target(const std::string& ns, planner::TargetKind kind,
                  const std::string& name) override {
    reads.push_back("target " + ns + "/" + std::string(planner::toString(kind)) + "/" + name);
    return target_object;
  }
  LiveRead namespaceObject(const std::string& name) override {
    reads.push_back("namespace " + name);
    return namespace_object;
  }
};

// A KubeClient that answers get() and create() from tables and refuses everything else.
class FakeKubeClient final : public k8s::KubeClient {
 public:
  // Keyed by "<resource>/<ns>/<name>" (ns empty for cluster-scoped).
  std::map<std::string, k8s::Result<Json>> objects;
  // create(): the answer, and the objects posted.
  std::optional<k8s::Result<Json>> create_answer;
  std::vector<Json> created;
  std::vector<std::string> gets;

  static std::string key(const k8s::Resource& r, const std::string& ns, const std::string& name) {
    return r.resource + "/" + ns + "/" + name;
  }

  k8s::Result<Json> get(const k8s::Resource& r, const std::string& ns, const std::string& name,
                        const std::string& = {}) override {
    gets.push_back(key(r, ns, name));
    const auto it = objects.find(key(r, ns, name));
    if (it == objects.end()) return k8s::makeError(k8s::ErrorKind::NotFound, "not found");
    return it->second;
  }
  k8s::Result<Json> create(const k8s::Resource&, const std::string&, const Json& obj) override {
    created.push_back(obj);
    if (!create_answer) return k8s::makeError(k8s::ErrorKind::Other, "create not expected");
    return *create_answer;
  }
  k8s::Result<Json> list(const k8s::Resource&, const std::string&,
                         const k8s::ListOptions& = {}) override {
    return refused();
  }
  k8s::Result<Json> update(const k8s::Resource&, const std::string&, const Json&,
                           const std::string& = {}) override {
    return refused();
  }
  k8s::Result<Json> patch(const k8s::Resource&, const std::string&, const std::string&,
                          k8s::PatchType, const Json&, const std::string& = {}) override {
    return refused();
  }
  k8s::Result<Json> remove(const k8s::Resource&, const std::string&, const std::string&,
                           const k8s::DeleteOptions& = {}) override {
    return refused();
  }
  k8s::Result<void> watch(const k8s::Resource&, const std::string&, const k8s::WatchOptions&,
                          const k8s::WatchHandler&, const std::atomic<bool>* = nullptr) override {
    return k8s::makeError(k8s::ErrorKind::Other, "the guard never watches");
  }

 private:
  static k8s::Result<Json> refused() {
    return k8s::makeError(k8s::ErrorKind::Other, "the guard never writes");
  }
};

}  // namespace shardscaler::guard::testing
