// Integration tests of the operator emulator against the real local control plane: StatefulSet
// names, labels, env, owner references and pods; scale-down cleanup; spec.paused; the
// AlreadyExists label repair; invisibility of a StatefulSet without the name label; agents;
// the config Secret's modulus; a prompt clean exit on SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "shardscaler/k8s_client/kube_config.h"
#include "shardscaler/k8s_client/rest_client.h"
#include "shardscaler/test_kit/eventually.h"
#include "shardscaler/testenv/control_plane.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::testenv {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Json = nlohmann::json;

const k8s::Resource kPrometheuses{
    .group = "monitoring.coreos.com", .version = "v1", .resource = "prometheuses"};
const k8s::Resource kAgents{
    .group = "monitoring.coreos.com", .version = "v1alpha1", .resource = "prometheusagents"};
constexpr auto kTimeout = 60s;

// An object's status, or {} while it has none yet (the emulator writes it after its first sync).
Json statusOf(const Json& object) {
  auto it = object.find("status");
  return it != object.end() && it->is_object() ? *it : Json::object();
}

// How often a wait looks again: each look is a request to the API server.
constexpr auto kPoll = 100ms;

class OperatorEmulatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto& plane = sharedControlPlane();
    std::string out, err;
    ASSERT_EQ(plane.kubectl(std::string("apply -f ") + SHARDSCALER_EMULATOR_CRD_DIR, &out, &err), 0)
        << err;
    for (const char* crd :
         {"prometheuses.monitoring.coreos.com", "prometheusagents.monitoring.coreos.com"}) {
      ASSERT_EQ(
          plane.kubectl(std::string("wait --for condition=established --timeout=60s crd/") + crd,
                        &out, &err),
          0)
          << err;
    }
  }

  void SetUp() override {
    auto& plane = sharedControlPlane();
    auto config =
        k8s::loadKubeConfig(k8s::ConfigSources{.kubeconfig_flag = plane.kubeconfigPath().string()});
    ASSERT_TRUE(config) << config.error().describe();
    client_ = std::make_unique<k8s::RestClient>(*config);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    ns_ = "emu-" + std::to_string(++counter_);
    std::string err;
    ASSERT_EQ(plane.kubectl("create namespace " + ns_, nullptr, &err), 0) << err;
    emulator_ = std::make_unique<OperatorEmulator>(
        OperatorEmulatorOptions{.kubeconfig = plane.kubeconfigPath(), .namespaces = {ns_}});
    std::cerr << info->name() << ": namespace " << ns_ << ", action log "
              << emulator_->actionLogPath() << std::endl;
  }

  void TearDown() override {
    if (!emulator_) return;
    if (HasFailure()) {
      emulator_->keepWorkDir();
      std::cerr << "emulator log tail:\n" << emulator_->logTail() << std::endl;
    }
    EXPECT_TRUE(OperatorEmulator::exitedCleanly(emulator_->stop()));
  }

  void apply(const std::string& manifest) {
    std::string out, err;
    ASSERT_EQ(sharedControlPlane().kubectl("apply -n " + ns_ + " -f -", &out, &err, manifest), 0)
        << err << "\n"
        << manifest;
  }

  // A Prometheus whose configuration the emulator manages, with one static scrape job.
  void createPrometheus(const std::string& name, int shards) {
    apply(R"(apiVersion: v1
kind: Secret
metadata: {name: extra-scrape}
stringData:
  jobs.yaml: |
    - job_name: static
      static_configs:
      - targets: ["127.0.0.1:1", "127.0.0.1:2"]
---
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: )" +
          name + R"(}
spec:
  shards: )" +
          std::to_string(shards) + R"(
  replicas: 1
  serviceMonitorSelector: {}
  additionalScrapeConfigs: {name: extra-scrape, key: jobs.yaml}
)");
  }

  Json patchTarget(const k8s::Resource& r, const std::string& name, const Json& patch) {
    auto result = client_->patch(r, ns_, name, k8s::PatchType::Merge, patch);
    EXPECT_TRUE(result) << result.error().describe();
    return result ? *result : Json();
  }

  std::optional<Json> get(const k8s::Resource& r, const std::string& name) {
    auto result = client_->get(r, ns_, name);
    if (!result) return std::nullopt;
    return *result;
  }

  // Names of the StatefulSets in the namespace that are not being deleted, sorted.
  std::vector<std::string> liveStatefulSets() {
    std::vector<std::string> names;
    auto list = client_->list(k8s::resources::statefulSets(), ns_);
    if (!list) return names;
    for (const auto& sts : (*list)["items"]) {
      if (sts["metadata"].contains("deletionTimestamp")) continue;
      names.push_back(sts["metadata"]["name"].get<std::string>());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Waits for the emulator's "sync" record of `name` at `generation` (or later).
  bool waitForSync(const std::string& name, long long generation, const std::string& outcome) {
    return emulator_->waitForAction(kTimeout, [&](const EmulatorAction& a) {
      return a.verb == "sync" && a.ns == ns_ && a.name == name && a.generation &&
             *a.generation >= generation && a.outcome == outcome;
    });
  }

  // Index of the first "sync" record of `name` at `generation` (or later) with `outcome`.
  std::size_t indexOfSync(const std::string& name, long long generation,
                          const std::string& outcome) {
    auto all = emulator_->actions();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto& a = all[i];
      if (a.verb == "sync" && a.ns == ns_ && a.name == name && a.generation &&
          *a.generation >= generation && a.outcome == outcome) {
        return i;
      }
    }
    ADD_FAILURE() << "no sync of " << name << " at generation " << generation;
    return all.size();
  }

  // Waits until the emulator has recorded nothing new for `quiet` (its resync is 5 min, so an
  // idle emulator stays idle); false if it is still busy after kTimeout.
  bool waitForQuiet(std::chrono::milliseconds quiet = 1s) {
    std::size_t seen = emulator_->actions().size();
    auto since = std::chrono::steady_clock::now();
    return test_kit::eventually(kTimeout, kPoll, [&] {
      const std::size_t now = emulator_->actions().size();
      if (now != seen) {
        seen = now;
        since = std::chrono::steady_clock::now();
      }
      return std::chrono::steady_clock::now() - since >= quiet;
    });
  }

  std::vector<EmulatorAction> statefulSetWrites(std::size_t after = 0) {
    std::vector<EmulatorAction> writes;
    auto all = emulator_->actions();
    for (std::size_t i = after; i < all.size(); ++i) {
      if (all[i].isWrite() && all[i].kind == "StatefulSet") writes.push_back(all[i]);
    }
    return writes;
  }

  static int counter_;
  std::string ns_;
  std::unique_ptr<k8s::RestClient> client_;
  std::unique_ptr<OperatorEmulator> emulator_;
};

int OperatorEmulatorTest::counter_ = 0;

std::string envValue(const Json& container, const std::string& name) {
  for (const auto& e : container.value("env", Json::array())) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return "<unset>";
}

TEST_F(OperatorEmulatorTest, ThreeShardsGetTheOperatorsNamesLabelsEnvOwnersAndPods) {
  createPrometheus("main", 3);
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 3; }))
      << ::testing::PrintToString(liveStatefulSets());
  EXPECT_THAT(liveStatefulSets(),
              ElementsAre("prometheus-main", "prometheus-main-shard-1", "prometheus-main-shard-2"));
  auto prom = get(kPrometheuses, "main");
  ASSERT_TRUE(prom);
  const std::string uid = (*prom)["metadata"]["uid"];

  for (int shard = 0; shard < 3; ++shard) {
    const std::string name =
        shard == 0 ? "prometheus-main" : "prometheus-main-shard-" + std::to_string(shard);
    auto sts = get(k8s::resources::statefulSets(), name);
    ASSERT_TRUE(sts) << name;
    const Json& labels = (*sts)["metadata"]["labels"];
    EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "prometheus-operator");
    EXPECT_EQ(labels["managed-by"], "prometheus-operator");
    EXPECT_EQ(labels["app.kubernetes.io/name"], "prometheus");
    EXPECT_EQ(labels["app.kubernetes.io/instance"], "main");
    EXPECT_EQ(labels["operator.prometheus.io/name"], "main");
    EXPECT_EQ(labels["operator.prometheus.io/shard"], std::to_string(shard));
    EXPECT_EQ(labels["operator.prometheus.io/mode"], "server");
    EXPECT_EQ(labels["prometheus"], "main");
    const Json& owner = (*sts)["metadata"]["ownerReferences"][0];
    EXPECT_EQ(owner["kind"], "Prometheus");
    EXPECT_EQ(owner["name"], "main");
    EXPECT_EQ(owner["uid"], uid);
    EXPECT_EQ(owner["controller"], true);
    EXPECT_EQ(owner["blockOwnerDeletion"], true);
    const Json& pod_spec = (*sts)["spec"]["template"]["spec"];
    EXPECT_EQ(pod_spec["terminationGracePeriodSeconds"], 600);
    EXPECT_EQ(pod_spec["containers"][1]["name"], "config-reloader");
    EXPECT_EQ(envValue(pod_spec["containers"][1], "SHARD"), std::to_string(shard));
    EXPECT_EQ(envValue(pod_spec["initContainers"][0], "SHARD"), std::to_string(shard));
    EXPECT_EQ((*sts)["spec"]["selector"]["matchLabels"]["operator.prometheus.io/shard"],
              std::to_string(shard));

    // The real StatefulSet controller makes the pod, with the labels shardscaler relies on.
    const std::string pod_name = name + "-0";
    std::optional<Json> pod;
    ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
      return (pod = get(k8s::resources::pods(), pod_name)).has_value();
    })) << pod_name;
    const Json& pod_labels = (*pod)["metadata"]["labels"];
    EXPECT_EQ(pod_labels["operator.prometheus.io/name"], "main");
    EXPECT_EQ(pod_labels["operator.prometheus.io/shard"], std::to_string(shard));
    EXPECT_EQ(pod_labels["statefulset.kubernetes.io/pod-name"], pod_name);
  }

  // Status: shards and the scale selector the stand-in CRD's scale subresource reads.
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto p = get(kPrometheuses, "main");
    return p && statusOf(*p).value("shards", 0) == 3 &&
           statusOf(*p).value("shardStatuses", Json::array()).size() == 3;
  }));
  auto status = (*get(kPrometheuses, "main"))["status"];
  EXPECT_EQ(status["selector"],
            "app.kubernetes.io/instance=main,app.kubernetes.io/managed-by=prometheus-operator,"
            "app.kubernetes.io/name=prometheus,operator.prometheus.io/name=main,prometheus=main");
  EXPECT_EQ(status["paused"], false);
  auto scale = client_->get(kPrometheuses, ns_, "main", "scale");
  ASSERT_TRUE(scale) << scale.error().describe();
  EXPECT_EQ((*scale)["status"]["replicas"], 3);
  EXPECT_TRUE(get(k8s::resources::secrets(), "prometheus-main"));
  EXPECT_TRUE(get(k8s::Resource{.group = "", .version = "v1", .resource = "services"},
                  "prometheus-operated"));
}

TEST_F(OperatorEmulatorTest, ScaleDownFromThreeToOneDeletesShardsOneAndTwo) {
  createPrometheus("main", 3);
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 3; }));
  patchTarget(kPrometheuses, "main", {{"spec", {{"shards", 1}}}});
  // Foreground deletion: the garbage collector removes the pods, then the StatefulSets.
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    return !get(k8s::resources::statefulSets(), "prometheus-main-shard-1") &&
           !get(k8s::resources::statefulSets(), "prometheus-main-shard-2");
  })) << ::testing::PrintToString(liveStatefulSets());
  EXPECT_THAT(liveStatefulSets(), ElementsAre("prometheus-main"));
  std::vector<std::string> deleted;
  for (const auto& a : statefulSetWrites()) {
    if (a.verb == "delete" && a.ok()) deleted.push_back(a.name + "#" + std::to_string(*a.shard));
  }
  std::sort(deleted.begin(), deleted.end());
  EXPECT_THAT(deleted, ElementsAre("prometheus-main-shard-1#1", "prometheus-main-shard-2#2"));
}

TEST_F(OperatorEmulatorTest, PausedTargetGetsNoCreateNorDeleteUntilResumed) {
  createPrometheus("main", 2);
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 2; }));

  // Scale up while paused: nothing is created.
  Json p = patchTarget(kPrometheuses, "main", {{"spec", {{"paused", true}, {"shards", 3}}}});
  ASSERT_TRUE(waitForSync("main", p["metadata"]["generation"], "paused"));
  // A sync that started before the pause may still write; from the paused sync on, nothing.
  const std::size_t mark = indexOfSync("main", p["metadata"]["generation"], "paused");
  // Scale down while paused: nothing is deleted.
  p = patchTarget(kPrometheuses, "main", {{"spec", {{"shards", 1}}}});
  ASSERT_TRUE(waitForSync("main", p["metadata"]["generation"], "paused"));
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto t = get(kPrometheuses, "main");
    return t && statusOf(*t).value("paused", false) && statusOf(*t).value("shards", 0) == 1;
  }));
  EXPECT_THAT(statefulSetWrites(mark), IsEmpty());
  EXPECT_THAT(liveStatefulSets(), ElementsAre("prometheus-main", "prometheus-main-shard-1"));

  // Resume: the emulator catches up with spec.shards = 1.
  p = patchTarget(kPrometheuses, "main", {{"spec", {{"paused", false}}}});
  ASSERT_TRUE(waitForSync("main", p["metadata"]["generation"], "ok"));
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 1; }));
  bool created_shard_two = false;
  for (const auto& a : statefulSetWrites()) {
    created_shard_two = created_shard_two || a.name == "prometheus-main-shard-2";
  }
  EXPECT_FALSE(created_shard_two);
}

TEST_F(OperatorEmulatorTest, WantedShardWithoutNameLabelGetsItsLabelsBackThroughAlreadyExists) {
  createPrometheus("main", 2);
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 2; }));
  // The first syncs update the StatefulSets they just created; one still in flight would put
  // the label back by that update, not by the create path under test.
  ASSERT_TRUE(waitForQuiet());
  const std::string name = "prometheus-main-shard-1";
  const std::size_t mark = emulator_->actions().size();
  auto removed =
      client_->patch(k8s::resources::statefulSets(), ns_, name, k8s::PatchType::Merge,
                     {{"metadata", {{"labels", {{"operator.prometheus.io/name", nullptr}}}}}});
  ASSERT_TRUE(removed) << removed.error().describe();

  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto sts = get(k8s::resources::statefulSets(), name);
    return sts && (*sts)["metadata"]["labels"].value("operator.prometheus.io/name", "") == "main";
  }));
  // Writes of a sync already in flight may come first: look for the create that failed with
  // AlreadyExists and the label patch right after it.
  auto writes = statefulSetWrites(mark);
  std::size_t create = writes.size();
  for (std::size_t i = 0; i < writes.size() && create == writes.size(); ++i) {
    if (writes[i].verb == "create" && writes[i].name == name &&
        writes[i].outcome.find("AlreadyExists") != std::string::npos) {
      create = i;
    }
  }
  ASSERT_LT(create + 1, writes.size()) << "no create that failed with AlreadyExists";
  EXPECT_EQ(writes[create + 1].verb, "patch");
  EXPECT_EQ(writes[create + 1].name, name);
  EXPECT_EQ(writes[create + 1].shard, 1);
  EXPECT_TRUE(writes[create + 1].ok()) << writes[create + 1].outcome;
  for (const auto& w : writes) EXPECT_NE(w.verb, "delete") << w.name;
  EXPECT_TRUE(get(k8s::resources::statefulSets(), name));  // never deleted
}

TEST_F(OperatorEmulatorTest, DetachedShardBeyondShardsIsInvisibleAndUntouched) {
  createPrometheus("main", 3);
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 3; }));
  const std::string detached = "prometheus-main-shard-2";

  // shardscaler's Retain sequence: pause, detach, then shards=2 and unpause in one patch.
  Json p = patchTarget(kPrometheuses, "main", {{"spec", {{"paused", true}}}});
  ASSERT_TRUE(waitForSync("main", p["metadata"]["generation"], "paused"));
  const std::size_t mark = indexOfSync("main", p["metadata"]["generation"], "paused");
  auto removed = client_->patch(
      k8s::resources::statefulSets(), ns_, detached, k8s::PatchType::Merge,
      {{"metadata",
        {{"labels",
          {{"operator.prometheus.io/name", nullptr}, {"shardscaler.io/retained", "true"}}}}}});
  ASSERT_TRUE(removed) << removed.error().describe();
  p = patchTarget(kPrometheuses, "main", {{"spec", {{"paused", false}, {"shards", 2}}}});
  ASSERT_TRUE(waitForSync("main", p["metadata"]["generation"], "ok"));
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto t = get(kPrometheuses, "main");
    return t && statusOf(*t).value("shards", 0) == 2;
  }));

  // Before the mark the detached StatefulSet was created; after it, no write may name it.
  auto all = emulator_->actions();
  for (std::size_t i = mark; i < all.size(); ++i) {
    EXPECT_FALSE(all[i].isWrite() && all[i].name == detached)
        << all[i].verb << " " << all[i].reason << " " << all[i].outcome;
  }
  auto sts = get(k8s::resources::statefulSets(), detached);
  ASSERT_TRUE(sts);
  EXPECT_FALSE((*sts)["metadata"].contains("deletionTimestamp"));
  EXPECT_FALSE((*sts)["metadata"]["labels"].contains("operator.prometheus.io/name"));
  EXPECT_EQ((*sts)["metadata"]["labels"]["shardscaler.io/retained"], "true");
  EXPECT_THAT(liveStatefulSets(),
              ElementsAre("prometheus-main", "prometheus-main-shard-1", detached));
}

TEST_F(OperatorEmulatorTest, AgentShardsUseThePromAgentPrefixAndAgentMode) {
  apply(R"(apiVersion: monitoring.coreos.com/v1alpha1
kind: PrometheusAgent
metadata: {name: edge}
spec: {shards: 2}
)");
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 2; }));
  EXPECT_THAT(liveStatefulSets(), ElementsAre("prom-agent-edge", "prom-agent-edge-shard-1"));
  auto sts = get(k8s::resources::statefulSets(), "prom-agent-edge-shard-1");
  ASSERT_TRUE(sts);
  const Json& labels = (*sts)["metadata"]["labels"];
  EXPECT_EQ(labels["operator.prometheus.io/mode"], "agent");
  EXPECT_EQ(labels["operator.prometheus.io/name"], "edge");
  EXPECT_EQ(labels["operator.prometheus.io/shard"], "1");
  EXPECT_EQ(labels["app.kubernetes.io/name"], "prometheus-agent");
  EXPECT_FALSE(labels.contains("prometheus"));
  EXPECT_EQ((*sts)["metadata"]["ownerReferences"][0]["kind"], "PrometheusAgent");
  EXPECT_EQ((*sts)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 600);
  EXPECT_EQ((*sts)["spec"]["serviceName"], "prometheus-agent-operated");
  EXPECT_TRUE(get(k8s::resources::secrets(), "prom-agent-edge"));
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] {
    auto a = get(kAgents, "edge");
    return a && statusOf(*a).value("shards", 0) == 2;
  }));
}

// The hashmod rule's modulus in the config Secret, or 0 when there is no such rule.
int configModulus(const Json& secret) {
  const std::string config =
      decodeConfigSecretData(secret["data"]["prometheus.yaml.gz"].get<std::string>());
  YAML::Node doc = YAML::Load(config);
  int modulus = 0;
  for (const auto& job : doc["scrape_configs"]) {
    for (const auto& rule : job["relabel_configs"]) {
      if (rule["action"].as<std::string>() == "hashmod") modulus = rule["modulus"].as<int>();
      if (rule["action"].as<std::string>() == "keep") {
        EXPECT_EQ(rule["regex"].as<std::string>(), "$(SHARD);|.+;.+");
      }
    }
  }
  return modulus;
}

TEST_F(OperatorEmulatorTest, ConfigSecretModulusFollowsSpecShards) {
  createPrometheus("main", 3);
  auto modulus = [&] {
    auto secret = get(k8s::resources::secrets(), "prometheus-main");
    return secret ? configModulus(*secret) : -1;
  };
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] { return modulus() == 3; })) << modulus();
  patchTarget(kPrometheuses, "main", {{"spec", {{"shards", 2}}}});
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] { return modulus() == 2; })) << modulus();
  patchTarget(kPrometheuses, "main", {{"spec", {{"shards", 1}}}});
  ASSERT_TRUE(test_kit::eventually(kTimeout, kPoll, [&] { return modulus() == 0; })) << modulus();
}

TEST_F(OperatorEmulatorTest, SigtermEndsTheEmulatorPromptlyWithExitCodeZero) {
  createPrometheus("main", 1);
  ASSERT_TRUE(
      test_kit::eventually(kTimeout, kPoll, [&] { return liveStatefulSets().size() == 1; }));
  const auto start = std::chrono::steady_clock::now();
  const int status = emulator_->stop(10s);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(OperatorEmulator::exitedCleanly(status)) << status;
  EXPECT_LT(took, 5s);
  std::cerr << "stop took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
            << " ms" << std::endl;
}

}  // namespace
}  // namespace shardscaler::testenv
