// Uninstalling, from the middle of a transition with retained shards: shardscaler runs as
// deploy/overlays/external-metrics installs it (its identity and RBAC, the guard's webhook
// configuration, the APIService it registers), a ShardSet retains two shards, and a crash cuts the
// next scale-down short after the pause and one detach. Then:
// - in the order README.md documents (the ShardSets, then the install), and
// - with the install deleted first (the CRD with it), finished by `shardscaler release`,
// no target is left paused, no retained shard is deleted (each is orphaned and named in an Event),
// no finalizer is left and no APIService dangles.
#include <gmock/gmock.h>

#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "shardscaler/e2e/deploy_rbac.h"
#include "shardscaler/e2e/guard_webhook.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/loopback_ports.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const k8s::Resource kApiServices{"apiregistration.k8s.io", "v1", "apiservices", false};
const k8s::Resource kCrds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
constexpr const char* kApiService = "v1beta1.external.metrics.k8s.io";
constexpr const char* kInstall = "overlays/external-metrics";

class UninstallTest : public ShardSetScenario {
 protected:
  // The install, before shardscaler starts: its guard webhook configuration (for this namespace)
  // and its identity; shardscaler runs with that ServiceAccount's token.
  std::filesystem::path shardscalerKubeconfig() override {
    webhook_ = {.configuration = "shardscaler-guard-" + ns_,
                .port = testenv::pickFreePort(),
                .label_key = "e2e.shardscaler.io/uninstall",
                .label_value = ns_};
    installGuardWebhook(webhook_);
    guardNamespace(webhook_, ns_);
    identities_ = renderedIdentities(kInstall, ns_);
    renameResource(identities_, "shardscaler-guard", webhook_.configuration);
    apply(yamlStream(identities_));
    return cluster().writeKubeconfig("shardscaler-" + ns_, serviceAccountToken(ns_, "shardscaler"));
  }

  std::vector<std::string> shardscalerArgs() const override {
    std::vector<std::string> args = guardServingArgs(webhook_, ns_);
    args.insert(args.end(), {"--external-metrics-api=true", "--register-api-service=true",
                             "--external-metrics-service=" + ns_ + "/shardscaler-metrics-api"});
    return args;
  }

  // 4 shards, 2 retained (scaled to 2), then a scale to 1 cut short by a crash after two writes:
  // the pause and the detach of shard 1. The target is left paused at 2 shards.
  void midTransitionWithRetainedShards() {
    createPrometheus(4);
    applyShardSet({.shards = 4, .when_scaled = "Retain", .retention_period = "1h"});
    ASSERT_TRUE(waitForSettled(4, 0));
    scaleWithKubectl(2);
    ASSERT_TRUE(waitForSettled(2, 2));
    ASSERT_TRUE(test_kit::eventually(90s, kPoll, [](std::string*) {
      return getOrNull(kApiServices, "", kApiService).is_object();
    })) << "shardscaler registered no APIService";
    shardscaler_->kill9();
    shardscaler_->start({"SHARDSCALER_FAULT_KILL_AFTER_WRITES=2"});
    ASSERT_TRUE(waitFor("shardscaler ready", [&](std::string*) {
      return shardscaler_->httpGet(shardscaler_->probePort(), "/readyz").first == 200;
    }));
    scaleWithKubectl(1);
    ASSERT_TRUE(
        test_kit::eventually(30s, kPoll, [&](std::string*) { return !shardscaler_->running(); }));
    ASSERT_TRUE(prometheus()["spec"].value("paused", false)) << "the crash came too late";
    ASSERT_EQ(prometheus()["spec"]["shards"], 2);
    const auto shard1 = statefulSet(1);
    ASSERT_TRUE(shard1 && shard1->retained) << "shard 1 was not detached before the crash";
  }

  // The install's objects, as `kubectl delete -f` of its manifest removes them: the webhook
  // configuration (which owns the APIService) and the cluster-wide RBAC.
  void deleteInstall() {
    removeGuardWebhook(webhook_.configuration);
    for (const std::string& object : clusterScoped(identities_)) {
      auto r = kubectl("delete " + object + " --ignore-not-found");
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  ::testing::AssertionResult waitForShardSetGone() {
    return waitFor("the ShardSet gone (no finalizer left)", [&](std::string* seen) {
      const Json ss = shardSet();
      *seen = ss.is_null() ? "gone" : ss["metadata"].dump();
      return ss.is_null();
    });
  }

  // What every uninstall must leave: the target resumed at its count, shard 1 attached again, the
  // retained shards 2 and 3 in place, owned by nothing of shardscaler's and named in an Event, and
  // no APIService.
  void expectCleanlyLetGo() {
    const Json target = prometheus();
    EXPECT_FALSE(target["spec"].value("paused", false)) << "the target was left paused";
    EXPECT_FALSE(target["metadata"]
                     .value("annotations", Json::object())
                     .contains("shardscaler.io/paused-by"));
    EXPECT_EQ(target["spec"]["shards"], 2);
    EXPECT_TRUE(waitFor("shards 0 and 1 attached", [&](std::string* seen) {
      const auto s0 = statefulSet(0);
      const auto s1 = statefulSet(1);
      *seen = ::testing::PrintToString(statefulSetUids());
      return s0 && s1 && s0->attached && s1->attached && !s1->retained;
    }));
    std::string events;
    for (const auto& e : shardSetEvents()) events += e + "\n";
    for (int index : {2, 3}) {
      const auto shard = statefulSet(index);
      ASSERT_TRUE(shard) << "retained shard " << index << " was deleted";
      EXPECT_TRUE(shard->retained);
      EXPECT_FALSE(shard->being_deleted);
      const Json sts = getOrNull(k8s::resources::statefulSets(), ns_, shard->name);
      for (const Json& ref : sts["metadata"].value("ownerReferences", Json::array())) {
        EXPECT_NE(ref.value("kind", ""), "ShardSet") << shard->name << " still owned by it";
      }
      EXPECT_THAT(events, HasSubstr(shard->name)) << "no Event names " << shard->name;
    }
    EXPECT_THAT(events, HasSubstr("RetainedShardsOrphaned: "));
    EXPECT_TRUE(test_kit::eventually(90s, kPoll, [](std::string*) {
      return getOrNull(kApiServices, "", kApiService).is_null();
    })) << "the APIService outlived the install";
    EXPECT_TRUE(emulatorStatefulSetWrites("delete").empty());
  }

  GuardWebhook webhook_;
  std::vector<Json> identities_;
};

TEST_F(UninstallTest, TheShardSetsFirstThenTheInstall) {
  midTransitionWithRetainedShards();
  // README.md: delete the ShardSets while shardscaler runs, then the install. (The delete goes
  // first so that the restarted shardscaler does not finish the scale-down before it.)
  auto deleted = kubectl("delete shardsets --all -n " + ns_ + " --wait=false");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  shardscaler_->start();
  ASSERT_TRUE(waitForShardSetGone());
  const auto status = shardscaler_->terminate(15s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  shardscaler_.reset();
  deleteInstall();
  expectCleanlyLetGo();
}

// Last in this file: it deletes the CRD, and puts it back at the end.
TEST_F(UninstallTest, TheInstallFirstThenShardscalerRelease) {
  midTransitionWithRetainedShards();
  shardscaler_.reset();  // killed by the fault: the install is gone
  deleteInstall();
  auto crd = kubectl("delete crd shardsets.shardscaler.io --wait=false");
  ASSERT_EQ(crd.exit_code, 0) << crd.err;
  // The CRD's deletion deletes the ShardSets, which wait for their finalizer: nothing runs it.
  ASSERT_TRUE(waitFor("the ShardSet being deleted", [&](std::string* seen) {
    const Json ss = shardSet();
    *seen = ss.dump();
    return ss.is_object() && ss["metadata"].contains("deletionTimestamp");
  }));
  std::this_thread::sleep_for(3s);
  ASSERT_TRUE(shardSet().is_object()) << "the finalizer went without shardscaler";

  // README.md's recovery: shardscaler release, with the user's own kubeconfig.
  testenv::ChildProcess release(
      "shardscaler-release",
      {ShardscalerProcess::binary().string(), "release", "--namespace=" + ns_,
       "--kubeconfig=" + cluster().kubeconfigPath().string(), "--timeout=3m"},
      {"PATH=/usr/bin:/bin"}, testLogDir() / "shardscaler-release.log");
  std::optional<int> status;
  ASSERT_TRUE(test_kit::eventually(4min, kPoll, [&](std::string*) {
    status = release.exitStatus();
    return status.has_value();
  }));
  std::ifstream log(release.logFile());
  const std::string output{std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>()};
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << output;
  EXPECT_THAT(output, HasSubstr("released: ShardSet " + ns_ + "/main"));
  ASSERT_TRUE(waitForShardSetGone());
  expectCleanlyLetGo();
  EXPECT_TRUE(test_kit::eventually(60s, kPoll, [](std::string*) {
    return getOrNull(kCrds, "", "shardsets.shardscaler.io").is_null();
  })) << "the CRD is stuck";

  auto restored = kubectl("apply -f " + (sourceDir() / "deploy/crds").string());
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  ASSERT_TRUE(waitFor("the CRD back",
                      [](std::string*) { return kubectl("get shardsets -A").exit_code == 0; }));
}

}  // namespace
}  // namespace shardscaler::e2e
