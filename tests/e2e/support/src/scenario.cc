#include "shardscaler/e2e/scenario.h"
#include "shardscaler/e2e/resources.h"

#include <algorithm>

#include "shardscaler/planner/naming.h"

namespace shardscaler::e2e {
namespace {

std::string str(const Json& j, const Json::json_pointer& p) {
  return j.contains(p) && j[p].is_string() ? j[p].get<std::string>() : std::string();
}

}  // namespace

std::string shardSetYaml(const std::string& ns, const std::string& name, const ShardSetSpec& spec) {
  std::string y = "apiVersion: shardscaler.io/v1alpha1\nkind: ShardSet\nmetadata: {name: " + name +
                  ", namespace: " + ns + "}\nspec:\n  targetRef: {kind: " + spec.target_kind +
                  ", name: " + spec.target_name + "}\n  shards: " + std::to_string(spec.shards) +
                  "\n";
  if (spec.min_shards) y += "  minShards: " + std::to_string(*spec.min_shards) + "\n";
  if (spec.max_shards) y += "  maxShards: " + std::to_string(*spec.max_shards) + "\n";
  if (spec.resharding) y += "  resharding: " + *spec.resharding + "\n";
  if (spec.when_scaled || spec.retention_period) {
    y += "  shardRetentionPolicy:\n";
    if (spec.when_scaled) y += "    whenScaled: " + *spec.when_scaled + "\n";
    if (spec.retention_period) {
      y += "    retain: {retentionPeriod: \"" + *spec.retention_period + "\"}\n";
    }
  }
  return y;
}

void ShardSetScenario::SetUp() {
  ns_ = createNamespace("e2e");
  const auto logs = testLogDir();
  testenv::OperatorEmulatorOptions emulator_options;
  emulator_options.kubeconfig = emulatorKubeconfig();
  emulator_options.namespaces = {ns_};
  emulator_options.work_dir = logs / "emulator";
  std::filesystem::create_directories(emulator_options.work_dir);
  emulator_ = std::make_unique<testenv::OperatorEmulator>(emulator_options);

  ShardscalerOptions options;
  options.kubeconfig = shardscalerKubeconfig();
  options.namespaces = {ns_};
  options.extra_args = shardscalerArgs();
  options.log_file = logs / "shardscaler.log";
  shardscaler_ = std::make_unique<ShardscalerProcess>(options);
}

void ShardSetScenario::TearDown() {
  if (HasFailure()) {
    std::cerr << "---- shardscaler log (tail) ----\n"
              << (shardscaler_ ? shardscaler_->logTail() : "")
              << "\n---- emulator log (tail) ----\n"
              << (emulator_ ? emulator_->logTail() : "") << "\n---- kept in " << testLogDir()
              << "\n";
  }
  if (shardscaler_) {
    auto status = shardscaler_->terminate(std::chrono::seconds(15));
    EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "shardscaler did not exit 0 on SIGTERM";
  }
  if (emulator_) emulator_->stop();
}

void ShardSetScenario::createPrometheus(int shards, const std::string& extra_spec_yaml) {
  apply(
      "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {name: main, "
      "namespace: " +
      ns_ + "}\nspec:\n  replicas: 1\n  shards: " + std::to_string(shards) + "\n" +
      extra_spec_yaml);
}

void ShardSetScenario::applyShardSet(const ShardSetSpec& spec) {
  apply(shardSetYaml(ns_, "main", spec));
}

void ShardSetScenario::scaleWithKubectl(int shards) {
  auto r = kubectl("scale shardset/main -n " + ns_ + " --replicas=" + std::to_string(shards));
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

Json ShardSetScenario::shardSet() const { return getOrNull(kShardSets, ns_, "main"); }
Json ShardSetScenario::prometheus() const {
  const auto kind = planner::parseTargetKind(target_kind_);
  return getOrNull(kind ? planner::targetResource(*kind) : kPrometheuses, ns_, "main");
}

std::vector<StatefulSetView> ShardSetScenario::statefulSets() const {
  auto list = adminClient().list(k8s::resources::statefulSets(), ns_);
  if (!list) throw std::runtime_error("list statefulsets: " + list.error().describe());
  std::vector<StatefulSetView> out;
  for (const Json& s : (*list)["items"]) {
    StatefulSetView v;
    v.name = str(s, "/metadata/name"_json_pointer);
    v.uid = str(s, "/metadata/uid"_json_pointer);
    const Json& labels = s["metadata"].value("labels", Json::object());
    const Json& annotations = s["metadata"].value("annotations", Json::object());
    if (auto idx = planner::parseShardIndex(labels.value("operator.prometheus.io/shard", ""))) {
      v.index = *idx;
    }
    v.attached = labels.contains("operator.prometheus.io/name");
    v.retained = labels.value("shardscaler.io/retained", "") == "true";
    v.deletion_timestamp = annotations.value("operator.prometheus.io/deletion-timestamp", "");
    v.being_deleted = s["metadata"].contains("deletionTimestamp");
    out.push_back(std::move(v));
  }
  std::ranges::sort(out, {}, &StatefulSetView::index);
  return out;
}

std::optional<StatefulSetView> ShardSetScenario::statefulSet(int index) const {
  for (auto& s : statefulSets()) {
    if (s.index == index) return s;
  }
  return std::nullopt;
}

std::set<std::string> ShardSetScenario::statefulSetUids() const {
  std::set<std::string> uids;
  for (const auto& s : statefulSets()) uids.insert(s.uid);
  return uids;
}

std::vector<std::string> ShardSetScenario::shardSetEvents() const {
  k8s::ListOptions opts;
  opts.field_selector = "involvedObject.kind=ShardSet,involvedObject.name=main";
  auto list = adminClient().list(k8s::resources::events(), ns_, opts);
  std::vector<std::string> out;
  if (!list) return out;
  for (const Json& e : (*list)["items"]) {
    out.push_back(e.value("reason", "") + ": " + e.value("message", ""));
  }
  return out;
}

std::optional<Json> ShardSetScenario::condition(const std::string& type) const {
  Json ss = shardSet();
  if (!ss.is_object() || !ss.contains("status")) return std::nullopt;
  for (const Json& c : ss["status"].value("conditions", Json::array())) {
    if (c.value("type", "") == type) return c;
  }
  return std::nullopt;
}

::testing::AssertionResult ShardSetScenario::waitFor(const std::string& what,
                                                     const std::function<bool(std::string*)>& check,
                                                     std::chrono::seconds timeout) {
  std::string last;
  if (test_kit::eventually(timeout, kPoll, check, &last)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "timed out after " << timeout.count() << "s waiting for "
                                       << what << "; last seen: " << last;
}

::testing::AssertionResult ShardSetScenario::waitForSettled(int active, int retained,
                                                            std::chrono::seconds timeout) {
  return waitFor(
      std::to_string(active) + " active and " + std::to_string(retained) + " retained shards",
      [&](std::string* seen) {
        Json target = prometheus();
        Json ss = shardSet();
        auto sets = statefulSets();
        int attached = 0, kept = 0;
        for (const auto& s : sets) {
          attached += s.attached && !s.being_deleted;
          kept += s.retained && !s.being_deleted;
        }
        const Json& status = ss.is_object() ? ss.value("status", Json::object()) : Json::object();
        const Json& spec = target.is_object() ? target.value("spec", Json::object()) : Json();
        *seen = "target spec=" + spec.dump() +
                " annotations=" + target["metadata"].value("annotations", Json::object()).dump() +
                " status.shards=" + status.value("shards", Json(-1)).dump() +
                " status.retainedShards=" + status.value("retainedShards", Json()).dump() +
                " attached=" + std::to_string(attached) + " retained=" + std::to_string(kept);
        const bool paused_by_us = target["metadata"]
                                      .value("annotations", Json::object())
                                      .contains("shardscaler.io/paused-by");
        return spec.value("shards", -1) == active && !spec.value("paused", false) &&
               !paused_by_us && status.value("shards", -1) == active &&
               status.value("retainedShards", Json::array()).size() ==
                   static_cast<size_t>(retained) &&
               status.value("observedGeneration", -1) == ss["metadata"].value("generation", -2) &&
               attached == active && kept == retained;
      },
      timeout);
}

std::vector<testenv::EmulatorAction> ShardSetScenario::emulatorStatefulSetWrites(
    const std::string& verb) const {
  std::vector<testenv::EmulatorAction> out;
  for (auto& a : emulator_->actions()) {
    if (a.kind == "StatefulSet" && a.verb == verb) out.push_back(std::move(a));
  }
  return out;
}

}  // namespace shardscaler::e2e
