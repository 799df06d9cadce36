// Low-churn re-sharding end to end (docs/design/resharding.md): the real control plane, the
// operator emulator generating the configuration Secret from a ScrapeConfig of 1,000 static targets
// and the target's scrape classes, shardscaler, and real Prometheus servers standing in for every
// shard StatefulSet (retained ones included), each running the Secret's configuration with its
// own $(SHARD). Which targets each shard scrapes is read from its /api/v1/targets, never from the
// emulator or shardscaler.
#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "shardscaler/e2e/resources.h"
#include "shardscaler/e2e/scenario.h"
#include "shardscaler/resharding/hashmod.h"
#include "shardscaler/testenv/shard_fleet.h"

namespace shardscaler::e2e {
namespace {

using namespace std::chrono_literals;

constexpr int kTargets = 1000;

std::vector<std::string> addresses() {
  std::vector<std::string> out;
  out.reserve(kTargets);
  for (int i = 0; i < kTargets; ++i) {
    out.push_back("127.2." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ":9");
  }
  return out;
}

// target ("<job>|<address>") -> the active shard that scrapes it.
using Assignment = std::map<std::string, int>;

double busiest(const Assignment& a, int shards) {
  std::vector<int> load(static_cast<size_t>(shards), 0);
  for (const auto& [t, s] : a) ++load[static_cast<size_t>(s)];
  return *std::ranges::max_element(load) * static_cast<double>(shards) /
         static_cast<double>(a.size());
}

class LowChurnTest : public ShardSetScenario {
 protected:
  void SetUp() override {
    ShardSetScenario::SetUp();
    std::string targets;
    for (const auto& a : addresses()) targets += "      - \"" + a + "\"\n";
    apply(
        "apiVersion: monitoring.coreos.com/v1alpha1\nkind: ScrapeConfig\nmetadata: {name: "
        "static, namespace: " +
        ns_ + "}\nspec:\n  scrapeInterval: 1h\n  staticConfigs:\n  - targets:\n" + targets);
    job_ = "scrapeConfig/" + ns_ + "/static";
  }

  // The configuration Secret the emulator (the operator) wrote.
  std::string config() const {
    const Json secret = getOrNull(k8s::resources::secrets(), ns_, "prometheus-main");
    if (!secret.is_object()) return "";
    return testenv::decodeConfigSecretData(secret["data"]["prometheus.yaml.gz"].get<std::string>());
  }

  // The Secret's rules for the ScrapeConfig's job are those of `mode` at `shards`.
  ::testing::AssertionResult waitForConfig(const std::string& mode, int shards) {
    return waitFor(mode + " rules for " + std::to_string(shards) + " shards",
                   [&](std::string* seen) {
                     const std::string text = config();
                     if (text.empty()) return false;
                     for (const auto& job : YAML::Load(text)["scrape_configs"]) {
                       if (job["job_name"].as<std::string>() != job_) continue;
                       bool ours = false, table = false, modulo = false;
                       for (const auto& rule : job["relabel_configs"]) {
                         const std::string target =
                             rule["target_label"] ? rule["target_label"].as<std::string>() : "";
                         if (target.starts_with("__tmp_shardscaler_")) ours = true;
                         if (target == "__tmp_shardscaler_shards" &&
                             rule["replacement"].as<std::string>() == std::to_string(shards)) {
                           table = true;
                         }
                         if (target == "__tmp_hash" && rule["modulus"] &&
                             rule["modulus"].as<int>() == shards) {
                           modulo = true;
                         }
                       }
                       *seen = YAML::Dump(job["relabel_configs"]).substr(0, 600);
                       return mode == "LowChurn" ? table : !ours && (modulo || shards == 1);
                     }
                     *seen = "no job " + job_;
                     return false;
                   });
  }

  // Every StatefulSet of the target runs a server with its own SHARD; what each active one scrapes.
  // Retained ones must scrape nothing, and each target exactly one active shard.
  Assignment observe(int active) {
    std::map<int, std::string> pods;
    for (const auto& s : statefulSets()) {
      if (!s.being_deleted && s.index >= 0) pods[s.index] = s.name + "-0";
    }
    fleet_.apply(config(), pods);
    Assignment out;
    for (const auto& [index, targets] : fleet_.settledTargets()) {
      if (index >= active) {
        EXPECT_TRUE(targets.empty()) << "shard " << index << " (at or above spec.shards " << active
                                     << ") scrapes " << targets.size() << " targets";
        continue;
      }
      for (const std::string& t : targets) {
        EXPECT_TRUE(out.emplace(t, index).second) << t << " is scraped by two shards";
      }
    }
    EXPECT_EQ(out.size(), static_cast<size_t>(kTargets)) << "targets scraped by no active shard";
    return out;
  }

  // kubectl scale, settled, and the Secret the operator generated for it.
  void scaleTo(const std::string& mode, int shards) {
    scaleWithKubectl(shards);
    created_ = std::max(created_, shards);
    ASSERT_TRUE(waitForSettled(shards, created_ - shards, 90s));
    ASSERT_TRUE(waitForConfig(mode, shards));
  }

  std::string job_;
  int created_ = 0;
  testenv::ShardFleet fleet_{"lowchurn"};
};

// Steps between N and N+1 shards (N = 1..8, both ways) move at most 1/(N+1) + 2% of the targets, a
// scale-down only the removed shard's; the busiest shard carries at most 0.05 more over the mean
// than the operator's modulo sharding of the same targets; retained shards scrape nothing;
// switching on moves nothing (4 divides the 2,520 buckets) and switching off restores the
// operator's assignment exactly, each said in an Event.
TEST_F(LowChurnTest, StepsMoveAboutOneNPlusOnethOfTheTargetsAndRetainedShardsScrapeNothing) {
  createPrometheus(2, "  scrapeConfigSelector: {}\n");
  applyShardSet(
      {.shards = 2, .when_scaled = "Retain", .retention_period = "1h", .resharding = "Operator"});
  created_ = 2;
  ASSERT_TRUE(waitForSettled(2, 0));
  ASSERT_TRUE(waitForConfig("Operator", 2));

  // The operator's sharding, as the servers apply it: hashmod of the address.
  const auto modulo = [&](const Assignment& a, int shards) {
    for (const auto& [t, s] : a) {
      const std::string address = t.substr(t.find('|') + 1);
      if (static_cast<uint64_t>(s) != resharding::hashmod(address, static_cast<uint64_t>(shards))) {
        return false;
      }
    }
    return true;
  };
  Assignment before = observe(2);
  EXPECT_TRUE(modulo(before, 2));
  ASSERT_NO_FATAL_FAILURE(scaleTo("Operator", 4));
  const Assignment operator_at_4 = observe(4);
  EXPECT_TRUE(modulo(operator_at_4, 4));
  size_t operator_moved = 0;
  for (const auto& [t, s] : operator_at_4) operator_moved += before.at(t) != s;
  std::cout << "Operator 2 -> 4: " << operator_moved << " of " << kTargets << " moved\n";

  // Switching on at 4 shards: the first table is the operator's own assignment.
  ASSERT_EQ(kubectl("patch shardset/main -n " + ns_ +
                    " --type=merge -p '{\"spec\":{\"resharding\":\"LowChurn\"}}'")
                .exit_code,
            0);
  ASSERT_TRUE(waitForConfig("LowChurn", 4));
  before = observe(4);
  EXPECT_EQ(before, operator_at_4) << "switching on moved targets";
  ASSERT_TRUE(waitFor("the Resharding condition", [&](std::string* seen) {
    auto c = condition("Resharding");
    *seen = c ? c->dump() : "none";
    return c && (*c)["status"] == "True" && (*c)["reason"] == "LowChurn" &&
           (*c)["message"].get<std::string>().find("ScrapeConfig " + ns_ + "/static") !=
               std::string::npos;
  }));
  auto has_event = [&](const std::string& reason) {
    const auto events = shardSetEvents();
    return std::ranges::any_of(events, [&](const std::string& e) { return e.starts_with(reason); });
  };
  EXPECT_TRUE(has_event("LowChurnEnabled: ")) << ::testing::PrintToString(shardSetEvents());

  std::vector<int> steps = {3, 2, 1};
  for (int n = 2; n <= 9; ++n) steps.push_back(n);
  for (int n = 8; n >= 4; --n) steps.push_back(n);
  int from = 4;
  for (int to : steps) {
    SCOPED_TRACE(std::to_string(from) + " -> " + std::to_string(to));
    ASSERT_NO_FATAL_FAILURE(scaleTo("LowChurn", to));
    const Assignment after = observe(to);
    size_t moved = 0;
    for (const auto& [t, s] : after) {
      auto was = before.find(t);
      if (was == before.end() || was->second == s) continue;
      ++moved;
      if (to < from) {
        EXPECT_GE(was->second, to) << t << " moved between shards that both stay";
      }
      if (to > from) {
        EXPECT_GE(s, from) << t << " moved between shards that were both there";
      }
    }
    const double fraction = static_cast<double>(moved) / kTargets;
    double modulo_busiest = 0;
    {
      Assignment m;
      for (const auto& a : addresses()) {
        m[a] = static_cast<int>(resharding::hashmod(a, static_cast<uint64_t>(to)));
      }
      modulo_busiest = busiest(m, to);
    }
    std::cout << "LowChurn " << from << " -> " << to << ": moved " << fraction << " (bound "
              << 1.0 / std::max(from, to) + 0.02 << "), busiest " << busiest(after, to)
              << " (modulo " << modulo_busiest << ")\n";
    EXPECT_LE(fraction, 1.0 / std::max(from, to) + 0.02);
    EXPECT_LE(busiest(after, to), modulo_busiest + 0.05);
    before = after;
    from = to;
  }

  // Switching off: the operator's assignment again, in one step, said in an Event.
  ASSERT_EQ(kubectl("patch shardset/main -n " + ns_ +
                    " --type=merge -p '{\"spec\":{\"resharding\":\"Operator\"}}'")
                .exit_code,
            0);
  ASSERT_TRUE(waitForConfig("Operator", 4));
  EXPECT_EQ(observe(4), operator_at_4);
  EXPECT_TRUE(waitFor("the LowChurnDisabled Event", [&](std::string* seen) {
    *seen = ::testing::PrintToString(shardSetEvents());
    return has_event("LowChurnDisabled: ");
  }));
  auto c = condition("Resharding");
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)["status"], "False");
  EXPECT_EQ((*c)["reason"], "OperatorSharding");
}

// A ScrapeConfig that sets __tmp_hash itself would lose that rule after shardscaler's hashmod (the
// operator adds no sharding rules after one): LowChurn is refused, and nothing is written, until
// the ScrapeConfig names a scrape class of its own; then the rules go on within the minute in which
// shardscaler reads the scrape objects again.
TEST_F(LowChurnTest, AScrapeConfigWithItsOwnHashKeyHoldsItOffUntilItHasAClassOfItsOwn) {
  apply(
      "apiVersion: monitoring.coreos.com/v1alpha1\nkind: ScrapeConfig\nmetadata: {name: keyed, "
      "namespace: " +
      ns_ +
      "}\nspec:\n  staticConfigs:\n  - targets: [\"127.3.0.1:9\"]\n  relabelings:\n"
      "  - {sourceLabels: [__address__], targetLabel: __tmp_hash, action: replace}\n");
  createPrometheus(2, "  scrapeConfigSelector: {}\n");
  applyShardSet({.shards = 2, .resharding = "LowChurn"});
  ASSERT_TRUE(waitForSettled(2, 0));
  ASSERT_TRUE(waitFor("the refusal", [&](std::string* seen) {
    auto c = condition("Resharding");
    *seen = c ? c->dump() : "none";
    return c && (*c)["status"] == "False" && (*c)["reason"] == "OwnShardingRules" &&
           (*c)["message"].get<std::string>().find("ScrapeConfig " + ns_ + "/keyed") !=
               std::string::npos;
  }));
  EXPECT_FALSE(prometheus()["spec"].contains("scrapeClasses"));

  ASSERT_EQ(kubectl("patch prometheus/main -n " + ns_ +
                    " --type=merge -p '{\"spec\":{\"scrapeClasses\":[{\"name\":\"plain\"}]}}'")
                .exit_code,
            0);
  ASSERT_EQ(kubectl("patch scrapeconfig/keyed -n " + ns_ +
                    " --type=merge -p '{\"spec\":{\"scrapeClass\":\"plain\"}}'")
                .exit_code,
            0);
  ASSERT_TRUE(waitFor(
      "LowChurn on, keyed left to the operator",
      [&](std::string* seen) {
        auto c = condition("Resharding");
        *seen = c ? c->dump() : "none";
        return c && (*c)["status"] == "True" &&
               (*c)["message"].get<std::string>().find(
                   "ScrapeConfig " + ns_ + "/keyed: scrape class \"plain\"") != std::string::npos;
      },
      150s));
  ASSERT_TRUE(waitForConfig("LowChurn", 2));
  const Json classes = prometheus()["spec"]["scrapeClasses"];
  ASSERT_EQ(classes.size(), 2u) << classes.dump();
  EXPECT_EQ(classes[0], Json({{"name", "plain"}})) << "the user's class is kept as written";
}

}  // namespace
}  // namespace shardscaler::e2e
