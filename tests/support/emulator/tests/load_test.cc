// Integration tests of the operator emulator's load modes against the real local control plane:
// with --statefulset-lag, a shard detached (relabelled without operator.prometheus.io/name) right
// before spec.shards is lowered is deleted, as the real operator does when its StatefulSet
// informer trails the API server (issue 9); with --sync-latency, a sync that read the target
// before a pause deletes after it. Timings are chosen so that neither result can come by luck.
// A delete an admission webhook refused is recorded with the webhook's name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/meta_time.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/child_process.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/loopback_ports.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::testenv {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const k8s::Resource kPrometheuses{
    .group = "monitoring.coreos.com", .version = "v1", .resource = "prometheuses"};
constexpr auto kTimeout = 60s;
constexpr auto kLag = 2000ms;  // the largest the emulator takes: the widest window
const std::string kDetached = "prometheus-main-shard-2";

// How often a wait looks again: each look is a request to the API server.
constexpr auto kPoll = 100ms;

class EmulatorLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto& plane = sharedControlPlane();
    std::string out, err;
    ASSERT_EQ(plane.kubectl(std::string("apply -f ") + SHARDSCALER_EMULATOR_CRD_DIR, &out, &err), 0)
        << err;
    ASSERT_EQ(plane.kubectl("wait --for condition=established --timeout=60s "
                            "crd/prometheuses.monitoring.coreos.com",
                            &out, &err),
              0)
        << err;
  }

  void SetUp() override {
    auto& plane = sharedControlPlane();
    auto config =
        k8s::loadKubeConfig(k8s::ConfigSources{.kubeconfig_flag = plane.kubeconfigPath().string()});
    ASSERT_TRUE(config) << config.error().describe();
    client_ = std::make_unique<k8s::RestClient>(*config);
    ns_ = "emu-load-" + std::to_string(++counter_);
    std::string err;
    ASSERT_EQ(plane.kubectl("create namespace " + ns_, nullptr, &err), 0) << err;
  }

  void TearDown() override {
    if (!emulator_) return;
    if (HasFailure()) {
      emulator_->keepWorkDir();
      std::cerr << "action log " << emulator_->actionLogPath() << "\nemulator log tail:\n"
                << emulator_->logTail() << std::endl;
    }
    EXPECT_TRUE(OperatorEmulator::exitedCleanly(emulator_->stop()));
  }

  void startEmulator(OperatorEmulatorOptions options) {
    options.kubeconfig = sharedControlPlane().kubeconfigPath();
    options.namespaces = {ns_};
    emulator_ = std::make_unique<OperatorEmulator>(std::move(options));
  }

  void createPrometheus(int shards) {
    std::string err;
    const std::string manifest =
        "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\n"
        "metadata: {name: main}\nspec: {replicas: 1, shards: " +
        std::to_string(shards) + "}\n";
    ASSERT_EQ(sharedControlPlane().kubectl("apply -n " + ns_ + " -f -", nullptr, &err, manifest), 0)
        << err;
  }

  Json patch(const k8s::Resource& r, const std::string& name, const Json& body) {
    auto result = client_->patch(r, ns_, name, k8s::PatchType::Merge, body);
    EXPECT_TRUE(result) << result.error().describe();
    return result ? *result : Json();
  }

  std::optional<Json> get(const k8s::Resource& r, const std::string& name) {
    auto result = client_->get(r, ns_, name);
    if (!result) return std::nullopt;
    return *result;
  }

  // The emulator's own status of "main" says which expected shards its StatefulSet view lacks
  // ("statefulset <ns>/<name> not found" in the Available condition): the one outside signal
  // of what that view holds.
  bool viewShowsShard(const std::string& statefulset, bool present) {
    auto target = get(kPrometheuses, "main");
    if (!target) return false;
    for (const auto& c :
         target->value("status", Json::object()).value("conditions", Json::array())) {
      if (c.value("type", "") != "Available") continue;
      const bool missing =
          c.value("message", "").find(ns_ + "/" + statefulset + " not found") != std::string::npos;
      return missing != present;
    }
    return false;
  }

  // All three shards exist and the emulator's (lagged) view shows each of them.
  void settleThreeShards() {
    createPrometheus(3);
    for (const char* name :
         {"prometheus-main", "prometheus-main-shard-1", "prometheus-main-shard-2"}) {
      ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
        return get(k8s::resources::statefulSets(), name).has_value();
      })) << name;
    }
    ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
      auto t = get(kPrometheuses, "main");
      return t &&
             t->value("status", Json::object()).value("shardStatuses", Json::array()).size() == 3 &&
             viewShowsShard("prometheus-main", true) &&
             viewShowsShard("prometheus-main-shard-1", true) && viewShowsShard(kDetached, true);
    })) << get(kPrometheuses, "main").value_or(Json()).dump();
  }

  // shardscaler's Retain sequence: pause, detach shard 2, then shards=2 and resume in one
  // patch. `confirm_detach` waits between the detach and the resume until the emulator's view
  // no longer shows the detached shard (what a fallback without the guard must ensure).
  void pauseDetachAndLowerShards(bool confirm_detach) {
    Json p = patch(kPrometheuses, "main", {{"spec", {{"paused", true}}}});
    ASSERT_TRUE(emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
      return a.verb == "sync" && a.name == "main" && a.outcome == "paused" && a.generation &&
             *a.generation >= p["metadata"]["generation"].get<long long>();
    }));
    const auto detach_start = std::chrono::steady_clock::now();
    patch(k8s::resources::statefulSets(), kDetached,
          {{"metadata",
            {{"labels",
              {{"operator.prometheus.io/name", nullptr}, {"shardscaler.io/retained", "true"}}}}}});
    if (confirm_detach) {
      ASSERT_TRUE(
          test_kit::eventually(kTimeout, kPoll, [&] { return viewShowsShard(kDetached, false); }));
    }
    p = patch(kPrometheuses, "main", {{"spec", {{"paused", false}, {"shards", 2}}}});
    resumed_generation_ = p["metadata"]["generation"].get<long long>();
    if (!confirm_detach) {
      // The race is only deterministic while the resume lands well inside the lag.
      ASSERT_LT(std::chrono::steady_clock::now() - detach_start, kLag / 2)
          << "the detach and the resume took too long to show the lagging view's race";
    }
    ASSERT_TRUE(emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
      return a.verb == "sync" && a.name == "main" && a.outcome == "ok" && a.generation &&
             *a.generation >= resumed_generation_;
    }));
  }

  std::vector<EmulatorAction> writesTo(const std::string& statefulset) {
    std::vector<EmulatorAction> out;
    for (const auto& a : emulator_->actions()) {
      if (a.isWrite() && a.kind == "StatefulSet" && a.name == statefulset) out.push_back(a);
    }
    return out;
  }

  std::size_t countSyncs() {
    std::size_t n = 0;
    for (const auto& a : emulator_->actions()) n += a.verb == "sync" ? 1 : 0;
    return n;
  }

  static int counter_;
  std::string ns_;
  long long resumed_generation_ = 0;
  std::unique_ptr<k8s::RestClient> client_;
  std::unique_ptr<OperatorEmulator> emulator_;
};

int EmulatorLoadTest::counter_ = 0;

TEST_F(EmulatorLoadTest, WithALaggingStatefulSetViewADetachedShardIsDeletedWhenShardsAreLowered) {
  startEmulator({.statefulset_lag = kLag});
  ASSERT_NO_FATAL_FAILURE(settleThreeShards());
  ASSERT_NO_FATAL_FAILURE(pauseDetachAndLowerShards(/*confirm_detach=*/false));

  // The resumed sync still saw shard 2 labelled for "main" and deleted it, by name, with no
  // precondition: the data loss of issue 9.
  std::vector<std::string> deletes;
  for (const auto& a : writesTo(kDetached)) {
    if (a.verb == "delete") deletes.push_back(a.outcome + " | " + a.reason);
  }
  EXPECT_THAT(deletes, ElementsAre("ok | not expected for 2 shard(s)"));
  auto sts = get(k8s::resources::statefulSets(), kDetached);
  EXPECT_TRUE(!sts || (*sts)["metadata"].contains("deletionTimestamp"))
      << "the detached StatefulSet is still live";
}

TEST_F(EmulatorLoadTest, WithoutLagTheSameDetachConfirmedByTheViewIsLeftAlone) {
  startEmulator({});
  ASSERT_NO_FATAL_FAILURE(settleThreeShards());
  ASSERT_NO_FATAL_FAILURE(pauseDetachAndLowerShards(/*confirm_detach=*/true));
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto t = get(kPrometheuses, "main");
    return t && t->value("status", Json::object()).value("shards", 0) == 2;
  }));
  for (const auto& a : writesTo(kDetached)) {
    EXPECT_NE(a.verb, "delete") << a.outcome << " " << a.reason;
  }
  auto sts = get(k8s::resources::statefulSets(), kDetached);
  ASSERT_TRUE(sts);
  EXPECT_FALSE((*sts)["metadata"].contains("deletionTimestamp"));
}

TEST_F(EmulatorLoadTest, ASyncThatReadTheTargetBeforeAPauseDeletesAfterIt) {
  constexpr auto kHold = 3000ms;
  startEmulator({.sync_latency = kHold});
  ASSERT_NO_FATAL_FAILURE(settleThreeShards());
  // Idle: no sync record for longer than a sync holds, so none is in flight.
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    const auto syncs = countSyncs();
    std::this_thread::sleep_for(kHold + 1s);
    return countSyncs() == syncs;
  }));

  patch(kPrometheuses, "main", {{"spec", {{"shards", 2}}}});
  std::this_thread::sleep_for(kHold / 3);  // the sync has read shards=2 and is holding
  patch(kPrometheuses, "main", {{"spec", {{"paused", true}}}});
  const std::string paused_at = k8s::formatMicroTime(std::chrono::system_clock::now());
  ASSERT_TRUE(emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
    return a.verb == "delete" && a.name == kDetached;
  }));
  ASSERT_TRUE(emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
    return a.verb == "sync" && a.name == "main" && a.outcome == "paused";
  }));
  std::string deleted_at;
  for (const auto& a : writesTo(kDetached)) {
    if (a.verb == "delete" && a.ok()) deleted_at = a.time;
  }
  // The pause was written before the delete: the delete came from the sync that started
  // before it (RFC 3339 strings of one clock compare as times).
  EXPECT_GT(deleted_at, paused_at);
  auto target = get(kPrometheuses, "main");
  ASSERT_TRUE(target);
  EXPECT_TRUE((*target)["spec"].value("paused", false));
}

TEST_F(EmulatorLoadTest, ADeleteAnAdmissionWebhookRefusedIsRecordedWithTheWebhooksName) {
  startEmulator({});
  ASSERT_NO_FATAL_FAILURE(settleThreeShards());
  // A webhook that cannot be called, under failurePolicy Fail, on this namespace only: the
  // API server refuses every StatefulSet delete here with "failed calling webhook".
  RefusingPort down;
  const std::string webhook = "guard.emulator.test";
  std::string err;
  ASSERT_EQ(sharedControlPlane().kubectl("label namespace " + ns_ + " emulator-test=" + ns_,
                                         nullptr, &err),
            0)
      << err;
  const std::string config_name = "emulator-test-" + ns_;
  const std::string manifest = R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: )" + config_name +
                               R"(}
webhooks:
- name: )" + webhook + R"(
  admissionReviewVersions: ["v1"]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 2
  clientConfig: {url: ")" + down.url("https") +
                               R"(/validate"}
  namespaceSelector: {matchLabels: {emulator-test: )" +
                               ns_ + R"(}}
  rules:
  - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["DELETE"], resources: ["statefulsets"]}
)";
  ASSERT_EQ(sharedControlPlane().kubectl("apply -f -", nullptr, &err, manifest), 0) << err;
  struct Cleanup {
    std::string name;
    ~Cleanup() {
      sharedControlPlane().kubectl("delete validatingwebhookconfiguration " + name, nullptr,
                                   nullptr);
    }
  } cleanup{config_name};

  patch(kPrometheuses, "main", {{"spec", {{"shards", 2}}}});
  ASSERT_TRUE(emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
    return a.verb == "delete" && a.name == kDetached && !a.ok();
  }));
  std::vector<EmulatorAction> refused;
  for (const auto& a : writesTo(kDetached)) {
    if (a.verb == "delete") refused.push_back(a);
  }
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(refused.front().webhook_failed, webhook);
  EXPECT_TRUE(refused.front().denied_by.empty());  // not a denial: the call itself failed
  EXPECT_THAT(refused.front().outcome, HasSubstr("failed calling webhook \"" + webhook + "\""));
  EXPECT_EQ(refused.front().raw["webhook_failed"], webhook);
  EXPECT_TRUE(get(k8s::resources::statefulSets(), kDetached));
}

TEST(EmulatorFlagsTest, LagBeyondTwoSecondsIsRefusedWithTheFlagNamed) {
  auto result =
      runCommand({operatorEmulatorBinary().string(), "--statefulset-lag", "2001ms"}, "", 30s);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--statefulset-lag must be at most 2000ms, not 2001ms"));
  result = runCommand({operatorEmulatorBinary().string(), "--seed", "x"}, "", 30s);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--seed must be a non-negative integer, not x"));
}

}  // namespace
}  // namespace shardscaler::testenv
