// deploy/'s RBAC against the real API server: shardscaler runs with the token of a ServiceAccount
// that only the RBAC objects of `kubectl kustomize deploy/base` bind, moved into the test's
// namespace. It must carry out scenario 5a and share the real Lease between two replicas; with
// one needed verb taken away it must log the API server's Forbidden and delete nothing.
#include <chrono>
#include <set>
#include <sstream>

#include "shardscaler/e2e/deploy_rbac.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/planner/deadline.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

// Removes `verb` on group/resource from the ClusterRole `role`; true if it was there.
bool removeVerb(std::vector<Json>& objects, const std::string& role, const std::string& group,
                const std::string& resource, const std::string& verb) {
  bool removed = false;
  for (Json& object : objects) {
    if (object.value("kind", "") != "ClusterRole" || object["metadata"].value("name", "") != role) {
      continue;
    }
    for (Json& rule : object["rules"]) {
      const Json& groups = rule["apiGroups"];
      const Json& resources = rule["resources"];
      if (std::ranges::find(groups, Json(group)) == groups.end() ||
          std::ranges::find(resources, Json(resource)) == resources.end()) {
        continue;
      }
      Json verbs = Json::array();
      for (const Json& v : rule["verbs"]) {
        if (v == verb) {
          removed = true;
        } else {
          verbs.push_back(v);
        }
      }
      rule["verbs"] = verbs;
    }
  }
  return removed;
}

class RenderedRbacScenario : public ShardSetScenario {
 protected:
  // Before shardscaler starts: the RBAC objects, then a kubeconfig with only their token.
  std::filesystem::path shardscalerKubeconfig() override {
    auto objects = renderedRbac(ns_);
    restrict(objects);
    apply(yamlStream(objects));
    // deploy/base's ServiceAccount, the one its Deployment runs as.
    const std::string token = serviceAccountToken(ns_, "shardscaler");
    kubeconfig_ = cluster().writeKubeconfig("shardscaler-" + ns_, token);
    expectNotAdmin();
    return kubeconfig_;
  }

  std::vector<std::string> shardscalerArgs() const override {
    // The Lease "shardscaler" (the default id, as deploy/base's Role names it) in the test's
    // namespace, as deploy/base's Role puts it in the pod's namespace.
    return {"--leader-elect=true", "--leader-election-namespace=" + ns_, "--identity=replica-a"};
  }

  // Changes the rendered RBAC before it is applied.
  virtual void restrict(std::vector<Json>& /*objects*/) {}

  // The token must not be an admin's: listing Secrets is nothing shardscaler may do.
  void expectNotAdmin() const {
    auto config = k8s::loadKubeconfigFiles({kubeconfig_});
    ASSERT_TRUE(config) << config.error().describe();
    k8s::RestClient client(std::move(*config));
    auto secrets = client.list(k8s::resources::secrets(), ns_);
    ASSERT_FALSE(secrets) << "the ServiceAccount may list Secrets";
    EXPECT_TRUE(secrets.error().is(k8s::ErrorKind::Forbidden)) << secrets.error().describe();
  }

  std::string leaseHolder() const {
    Json lease = getOrNull(k8s::resources::leases(), ns_, "shardscaler");
    return lease.is_object() ? lease["spec"].value("holderIdentity", "") : "";
  }

  ::testing::AssertionResult waitForLeaseHolder(const std::string& identity) {
    return waitFor("the Lease held by " + identity, [&](std::string* seen) {
      *seen = "holder \"" + leaseHolder() + "\"";
      return leaseHolder() == identity;
    });
  }

  static bool mentionsForbidden(const std::string& log) {
    return log.find("Forbidden") != std::string::npos || log.find("forbidden") != std::string::npos;
  }

  // 4 attached shards, Retain with a 1h period, settled.
  void startWithFourShards() {
    createPrometheus(4);
    applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
    ASSERT_TRUE(waitForSettled(4, 0));
  }

  std::filesystem::path kubeconfig_;
};

class RbacTest : public RenderedRbacScenario {};

// Scenario 5a with the rendered RBAC: 4 -> 2 with Retain.
TEST_F(RbacTest, RenderedRbacIsEnoughToScaleDownWithRetain) {
  ASSERT_NO_FATAL_FAILURE(startWithFourShards());
  ASSERT_TRUE(waitForLeaseHolder("replica-a"));
  const auto uids_before = statefulSetUids();
  ASSERT_EQ(uids_before.size(), 4u);

  const auto scaled_at = std::chrono::system_clock::now();
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  for (int i : {2, 3}) {
    auto s = statefulSet(i);
    ASSERT_TRUE(s) << "shard " << i << " was deleted";
    EXPECT_FALSE(s->attached) << s->name;
    EXPECT_TRUE(s->retained) << s->name;
    auto deadline = k8s::parseRfc3339(s->deletion_timestamp);
    ASSERT_TRUE(deadline) << s->name << ": " << s->deletion_timestamp;
    const auto until = std::chrono::system_clock::time_point(deadline->seconds) - scaled_at;
    EXPECT_GT(until, 1h - 2min) << s->deletion_timestamp;
    EXPECT_LT(until, 1h + 2min) << s->deletion_timestamp;
  }
  EXPECT_EQ(statefulSetUids(), uids_before) << "a StatefulSet was deleted or replaced";
  Json target = prometheus();
  EXPECT_EQ(target["spec"]["shards"], 2);
  EXPECT_EQ(target["spec"].value("paused", false), false);
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  // The Events went through too (create, and patch for repeats, with the same token).
  EXPECT_TRUE(waitFor("two ShardRetained Events", [&](std::string* seen) {
    auto events = shardSetEvents();
    *seen = ::testing::PrintToString(events);
    return std::ranges::count_if(
               events, [](const std::string& e) { return e.starts_with("ShardRetained: "); }) == 2;
  }));
  EXPECT_FALSE(mentionsForbidden(shardscaler_->logTail(1 << 20))) << shardscaler_->logTail();
}

// 4 -> 2 -> 4: the scale-up re-attaches the retained shards, each with its target's controller
// ownerReference back as the operator writes it (blockOwnerDeletion: true). The test control
// plane's API server runs OwnerReferencesPermissionEnforcement, as OpenShift's does: that takes
// update on prometheuses/finalizers, which the rendered RBAC grants.
TEST_F(RbacTest, RenderedRbacIsEnoughToReattachOnScaleUp) {
  ASSERT_NO_FATAL_FAILURE(startWithFourShards());
  ASSERT_TRUE(waitForLeaseHolder("replica-a"));
  const auto uids_before = statefulSetUids();
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  scaleWithKubectl(4);
  ASSERT_TRUE(waitForSettled(4, 0)) << shardscaler_->logTail();
  const std::string target_uid = prometheus()["metadata"]["uid"];
  for (int i : {2, 3}) {
    const Json sts = getOrNull(k8s::resources::statefulSets(), ns_,
                               "prometheus-main-shard-" + std::to_string(i));
    ASSERT_TRUE(sts.is_object());
    const Json refs = sts["metadata"].value("ownerReferences", Json::array());
    ASSERT_EQ(refs.size(), 1U) << sts["metadata"].dump();
    EXPECT_EQ(refs[0].value("uid", ""), target_uid);
    EXPECT_EQ(refs[0].value("controller", false), true);
    EXPECT_EQ(refs[0].value("blockOwnerDeletion", false), true);
  }
  EXPECT_EQ(statefulSetUids(), uids_before) << "a StatefulSet was deleted or replaced";
  EXPECT_FALSE(mentionsForbidden(shardscaler_->logTail(1 << 20))) << shardscaler_->logTail();
}

// Two replicas with the same ServiceAccount: one holds the Lease (create, then update), the other
// reads it (get) and takes over when the first releases it on SIGTERM (update).
TEST_F(RbacTest, TwoReplicasElectOneLeaderAndHandOver) {
  ASSERT_NO_FATAL_FAILURE(startWithFourShards());
  ASSERT_TRUE(waitForLeaseHolder("replica-a"));

  ShardscalerOptions b_options;
  b_options.kubeconfig = kubeconfig_;
  b_options.namespaces = {ns_};
  b_options.leader_elect = true;
  b_options.leader_election_namespace = ns_;
  b_options.identity = "replica-b";
  b_options.log_file = testLogDir() / "replica-b.log";
  ShardscalerProcess replica_b(b_options);
  ASSERT_TRUE(waitFor("replica-b to see replica-a lead", [&](std::string*) {
    return replica_b.logTail(1 << 20).find("new leader leader=replica-a") != std::string::npos;
  })) << replica_b.logTail();
  EXPECT_EQ(leaseHolder(), "replica-a");

  auto a_status = shardscaler_->terminate(15s);
  ASSERT_TRUE(a_status && WIFEXITED(*a_status) && WEXITSTATUS(*a_status) == 0)
      << "replica-a did not exit 0 on SIGTERM";
  ASSERT_TRUE(waitForLeaseHolder("replica-b")) << replica_b.logTail();

  // The new leader acts: 4 -> 3 retains shard 3.
  scaleWithKubectl(3);
  ASSERT_TRUE(waitForSettled(3, 1)) << replica_b.logTail();
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  EXPECT_FALSE(mentionsForbidden(shardscaler_->logTail(1 << 20))) << shardscaler_->logTail();
  EXPECT_FALSE(mentionsForbidden(replica_b.logTail(1 << 20))) << replica_b.logTail();
  auto b_status = replica_b.terminate(15s);
  EXPECT_TRUE(b_status && WIFEXITED(*b_status) && WEXITSTATUS(*b_status) == 0);
  EXPECT_EQ(leaseHolder(), "") << "replica-b did not release the Lease";
}

// The same RBAC without `patch` on statefulsets: detaching a shard is refused.
class RbacWithoutStatefulSetPatchTest : public RenderedRbacScenario {
 protected:
  void restrict(std::vector<Json>& objects) override {
    // deploy/base's ClusterRole "shardscaler", renamed by renderedRbac.
    ASSERT_TRUE(removeVerb(objects, "shardscaler-" + ns_, "apps", "statefulsets", "patch"))
        << "deploy/base grants no patch on statefulsets to remove";
  }
};

TEST_F(RbacWithoutStatefulSetPatchTest, LogsTheForbiddenVerbAndResourceAndDeletesNothing) {
  ASSERT_NO_FATAL_FAILURE(startWithFourShards());
  const auto uids_before = statefulSetUids();
  ASSERT_EQ(uids_before.size(), 4u);

  scaleWithKubectl(2);
  // The API server's own words, as shardscaler logs them: verb, resource and group (in the error
  // field of a text log line, quotes escaped).
  const std::string refusal = R"(cannot patch resource "statefulsets" in API group "apps")";
  const std::string logged = R"(cannot patch resource \"statefulsets\" in API group \"apps\")";
  std::string line;
  ASSERT_TRUE(waitFor("the Forbidden error in shardscaler's log", [&](std::string* seen) {
    std::istringstream log(shardscaler_->logTail(1 << 20));
    while (std::getline(log, line)) {
      if (line.find(logged) != std::string::npos) return true;
    }
    *seen = "no log line with: " + logged;
    return false;
  })) << shardscaler_->logTail();
  EXPECT_NE(line.find("Forbidden (403)"), std::string::npos) << line;
  // The first StatefulSet patch is the guard label on shard 0 (prometheus-main) or a detach.
  EXPECT_NE(line.find("StatefulSet prometheus-main"), std::string::npos)
      << "names the object: " << line;
  EXPECT_NE(line.find(" ERROR "), std::string::npos) << "logged at error level: " << line;

  // The ShardSet tells the user too.
  EXPECT_TRUE(waitFor("a Degraded condition naming the refusal", [&](std::string* seen) {
    auto degraded = condition("Degraded");
    *seen = degraded ? degraded->dump() : "no Degraded condition";
    return degraded && degraded->value("status", "") == "True" &&
           degraded->value("message", "").find(refusal) != std::string::npos;
  }));

  // Nothing deleted, nothing detached, the shard count unchanged; the target stays paused by
  // shardscaler (its first step), so the operator does not re-shard either.
  EXPECT_EQ(statefulSetUids(), uids_before);
  for (const auto& s : statefulSets()) {
    EXPECT_TRUE(s.attached && !s.retained && !s.being_deleted) << s.name;
  }
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  Json target = prometheus();
  EXPECT_EQ(target["spec"]["shards"], 4);
  EXPECT_TRUE(shardscaler_->running()) << "a refused call must not stop shardscaler";
}

// The same RBAC without update on the targets' finalizers: the API server refuses a re-attach
// for good. The scale-up is undone and held (Degraded, ApplyFailed, naming the refusal), and the
// target is never left paused; nothing is deleted.
class RbacWithoutTargetFinalizersTest : public RenderedRbacScenario {
 protected:
  void restrict(std::vector<Json>& objects) override {
    bool removed = false;
    for (Json& object : objects) {
      if (object.value("kind", "") != "ClusterRole" ||
          object["metadata"].value("name", "") != "shardscaler-" + ns_) {
        continue;
      }
      Json rules = Json::array();
      for (const Json& rule : object["rules"]) {
        const Json& resources = rule["resources"];
        if (std::ranges::find(resources, Json("prometheuses/finalizers")) != resources.end()) {
          removed = true;
        } else {
          rules.push_back(rule);
        }
      }
      object["rules"] = rules;
    }
    ASSERT_TRUE(removed) << "deploy/base grants nothing on prometheuses/finalizers to remove";
  }
};

TEST_F(RbacWithoutTargetFinalizersTest, ARefusedReattachLeavesTheTargetResumed) {
  ASSERT_NO_FATAL_FAILURE(startWithFourShards());
  scaleWithKubectl(2);
  ASSERT_TRUE(waitForSettled(2, 2));
  const auto uids_before = statefulSetUids();
  scaleWithKubectl(4);
  EXPECT_TRUE(waitFor("a Degraded condition naming the refused re-attach", [&](std::string* seen) {
    auto degraded = condition("Degraded");
    *seen = degraded ? degraded->dump() : "no Degraded condition";
    return degraded && degraded->value("reason", "") == "ApplyFailed" &&
           degraded->value("message", "").find("finalizers") != std::string::npos;
  }));
  EXPECT_TRUE(waitFor("the target resumed at its count", [&](std::string* seen) {
    const Json target = prometheus();
    *seen = target["spec"].dump();
    return !target["spec"].value("paused", false) && target["spec"].value("shards", 0) == 2;
  }));
  EXPECT_EQ(statefulSetUids(), uids_before);
  EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
}

// Each rendering of deploy/ is accepted by the API server as it is (server-side dry run: schema,
// defaults and validation of every object, including the pod templates).
TEST(DeployManifestsTest, ApiServerAcceptsEveryRendering) {
  for (const char* ns : {"shardscaler-system", "monitoring"}) {
    kubectl(std::string("create namespace ") + ns);  // may exist from an earlier run
  }
  for (const char* dir : {"base", "overlays/namespaced", "overlays/prometheus-operator-sidecar"}) {
    SCOPED_TRACE(std::string("deploy/") + dir);
    auto rendered = kubectl("kustomize " + (sourceDir() / "deploy" / dir).string());
    ASSERT_EQ(rendered.exit_code, 0) << rendered.err;
    // deploy/ writes PodDisruptionBudgets as policy/v1 (Kubernetes >= 1.21, the only version from
    // 1.25 on); the test control plane (1.20) has the same object as policy/v1beta1 only.
    const std::string v1 = "apiVersion: policy/v1\nkind: PodDisruptionBudget";
    for (auto at = rendered.out.find(v1); at != std::string::npos; at = rendered.out.find(v1)) {
      rendered.out.replace(at, v1.size(), "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget");
    }
    auto applied = kubectl("apply --dry-run=server -f -", rendered.out);
    EXPECT_EQ(applied.exit_code, 0) << applied.err << applied.out;
  }
}

}  // namespace
}  // namespace shardscaler::e2e
