// A test fixture for one ShardSet story: its own namespace, the operator emulator and the real
// shardscaler binary watching only that namespace, a Prometheus "main" and a ShardSet "main".
// Helpers read objects and wait; the tests assert.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "shardscaler/e2e/cluster.h"
#include "shardscaler/e2e/shardscaler_process.h"
#include "shardscaler/testenv/operator_emulator.h"

namespace shardscaler::e2e {

// The fields of a ShardSet spec the tests vary; empty optionals are left out of the YAML.
struct ShardSetSpec {
  std::string target_kind = "Prometheus";
  std::string target_name = "main";
  int shards = 1;
  std::optional<int> min_shards;
  std::optional<int> max_shards;
  std::optional<std::string> when_scaled;       // Retain | Delete
  std::optional<std::string> retention_period;  // "1h"
  std::optional<std::string> resharding;        // Operator | LowChurn
};

struct StatefulSetView {
  std::string name;
  std::string uid;
  int index = -1;
  bool attached = false;           // carries operator.prometheus.io/name
  bool retained = false;           // shardscaler.io/retained=true
  std::string deletion_timestamp;  // the annotation, "" when absent
  bool being_deleted = false;
};

class ShardSetScenario : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Extra `shardscaler run` flags for this fixture (override to change).
  virtual std::vector<std::string> shardscalerArgs() const { return {}; }
  // The kubeconfig shardscaler runs with; called in SetUp once ns_ exists and before shardscaler
  // starts. Default: the admin kubeconfig. Override to run it as another identity.
  virtual std::filesystem::path shardscalerKubeconfig() { return cluster().kubeconfigPath(); }
  // The kubeconfig the operator emulator runs with; called in SetUp once ns_ exists, before the
  // emulator starts. Default: the admin kubeconfig.
  virtual std::filesystem::path emulatorKubeconfig() { return cluster().kubeconfigPath(); }

  void createPrometheus(int shards, const std::string& extra_spec_yaml = {});
  void applyShardSet(const ShardSetSpec& spec);
  // kubectl scale shardset/main --replicas=N; fails the test on a kubectl error.
  void scaleWithKubectl(int shards);

  Json shardSet() const;
  Json prometheus() const;
  std::vector<StatefulSetView> statefulSets() const;  // of this namespace, by index
  std::optional<StatefulSetView> statefulSet(int index) const;
  std::set<std::string> statefulSetUids() const;
  // Events about the ShardSet: "reason: message" lines.
  std::vector<std::string> shardSetEvents() const;
  std::optional<Json> condition(const std::string& type) const;

  // Waits until the target has spec.shards == shards, is not paused, the ShardSet's status
  // reports `active` active shards and `retained` retained ones (observedGeneration current),
  // and the cluster has `active` attached StatefulSets. On timeout the failure names what it saw.
  ::testing::AssertionResult waitForSettled(
      int active, int retained, std::chrono::seconds timeout = std::chrono::seconds(60));
  // Waits until `check` holds, with `what` in the failure message.
  ::testing::AssertionResult waitFor(const std::string& what,
                                     const std::function<bool(std::string*)>& check,
                                     std::chrono::seconds timeout = std::chrono::seconds(60));

  // Writes by the emulator (the operator stand-in) to StatefulSets since the test started.
  std::vector<testenv::EmulatorAction> emulatorStatefulSetWrites(const std::string& verb) const;

  std::string ns_;
  // The kind of target prometheus() and waitForSettled read (a PrometheusAgent's tests set it).
  std::string target_kind_ = "Prometheus";
  std::unique_ptr<testenv::OperatorEmulator> emulator_;
  std::unique_ptr<ShardscalerProcess> shardscaler_;
};

std::string shardSetYaml(const std::string& ns, const std::string& name, const ShardSetSpec& spec);

}  // namespace shardscaler::e2e
