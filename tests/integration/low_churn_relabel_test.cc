// Low-churn re-sharding's relabelings run by real Prometheus servers (Debian's), no control plane:
// - hashmod as the server computes it, for the values and moduli of the unit tests' fixture
//   (tests/unit/resharding/testdata/prometheus_hashmod.tsv; SHARDSCALER_RECORD_HASHMOD=1 rewrites
//   it from the server's answers);
// - the configuration the operator emulator generates for a target carrying the scrape classes
//   resharding::planResharding writes, one server per shard with $(SHARD) substituted: every
//   target is scraped by exactly one shard, the one the table names for its bucket (ScrapeConfig
//   and Probe targets), and a ScrapeConfig that shards itself keeps its own rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "prometheus_config.h"
#include "shardscaler/resharding/hashmod.h"
#include "shardscaler/resharding/resharding.h"
#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/testenv/prometheus_process.h"
#include "shardscaler/testenv/shard_fleet.h"

namespace shardscaler {
namespace {

using Json = nlohmann::json;

struct Row {
  std::string value;
  uint64_t modulus = 0;
  uint64_t hashmod = 0;
};

std::vector<std::string> header;

std::vector<Row> readFixture() {
  std::ifstream in(SHARDSCALER_HASHMOD_FIXTURE);
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with('#')) {
      header.push_back(line);
      continue;
    }
    if (line.empty()) continue;
    const size_t a = line.find('\t');
    const size_t b = line.find('\t', a + 1);
    rows.push_back({Json::parse(line.substr(0, a)).get<std::string>(),
                    std::stoull(line.substr(a + 1, b - a - 1)), std::stoull(line.substr(b + 1))});
  }
  return rows;
}

TEST(LowChurnRelabel, HashmodIsWhatARealPrometheusComputes) {
  const auto rows = readFixture();
  ASSERT_FALSE(rows.empty()) << "no rows in " SHARDSCALER_HASHMOD_FIXTURE;
  std::vector<std::string> values;
  std::vector<uint64_t> moduli;
  for (const Row& r : rows) {
    if (std::ranges::find(values, r.value) == values.end()) values.push_back(r.value);
    if (std::ranges::find(moduli, r.modulus) == moduli.end()) moduli.push_back(r.modulus);
  }
  std::string config =
      "global: {scrape_interval: 1h}\nscrape_configs:\n- job_name: hashmod\n"
      "  static_configs:\n";
  for (size_t i = 0; i < values.size(); ++i) {
    config += "  - targets: ['127.0.0.1:9']\n    labels: {idx: '" + std::to_string(i) +
              "', v: " + Json(values[i]).dump() + "}\n";
  }
  config += "  relabel_configs:\n";
  for (uint64_t m : moduli) {
    config += "  - {source_labels: [v], target_label: h_" + std::to_string(m) +
              ", modulus: " + std::to_string(m) + ", action: hashmod}\n";
  }
  testenv::PrometheusProcess server({.name = "hashmod", .config_yaml = config});
  Json targets;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto got = test_kit::httpGet(server.url() + "/api/v1/targets?state=active");
    if (got.status == 200) {
      targets = Json::parse(got.body)["data"]["activeTargets"];
      if (targets.size() == values.size()) break;
    }
    // Discovery reaches the scrape manager on its own 5 s schedule.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(targets.size(), values.size()) << server.logTail();
  std::map<std::pair<std::string, uint64_t>, uint64_t> computed;
  for (const Json& t : targets) {
    const std::string& value = values.at(std::stoul(t["labels"]["idx"].get<std::string>()));
    for (uint64_t m : moduli) {
      computed[{value, m}] = std::stoull(t["labels"]["h_" + std::to_string(m)].get<std::string>());
    }
  }
  if (std::getenv("SHARDSCALER_RECORD_HASHMOD") != nullptr) {
    std::ofstream out(SHARDSCALER_HASHMOD_FIXTURE, std::ios::trunc);
    for (const auto& line : header) out << line << "\n";
    for (const Row& r : rows) {
      out << Json(r.value).dump() << "\t" << r.modulus << "\t" << computed[{r.value, r.modulus}]
          << "\n";
    }
  }
  for (const Row& r : rows) {
    const uint64_t server_value = computed[{r.value, r.modulus}];
    EXPECT_EQ(server_value, r.hashmod) << Json(r.value).dump() << " mod " << r.modulus;
    EXPECT_EQ(resharding::hashmod(r.value, r.modulus), server_value)
        << Json(r.value).dump() << " mod " << r.modulus;
  }
}

Json scrapeConfig(const std::string& name, int count, int salt, const Json& relabelings) {
  Json targets = Json::array();
  for (int i = 0; i < count; ++i) {
    targets.push_back("127." + std::to_string(salt) + "." + std::to_string(i / 250) + "." +
                      std::to_string(i % 250 + 1) + ":9");
  }
  Json spec{{"scrapeInterval", "1h"}, {"staticConfigs", Json::array({{{"targets", targets}}})}};
  if (!relabelings.empty()) spec["relabelings"] = relabelings;
  return {{"metadata", {{"namespace", "it"}, {"name", name}}}, {"spec", spec}};
}

Json probe(int count) {
  Json targets = Json::array();
  for (int i = 0; i < count; ++i) targets.push_back("http://service-" + std::to_string(i) + "/");
  return {{"metadata", {{"namespace", "it"}, {"name", "blackbox"}}},
          {"spec",
           {{"interval", "1h"},
            {"prober", {{"url", "127.0.0.1:9115"}}},
            {"targets", {{"staticConfig", {{"static", targets}}}}}}}};
}

TEST(LowChurnRelabel, EveryTargetIsScrapedByTheShardTheTableNames) {
  constexpr int kShards = 4;
  const Json own_rules =
      Json::array({{{"sourceLabels", {"__address__"}},
                    {"targetLabel", "__tmp_mine"},
                    {"modulus", kShards},
                    {"action", "hashmod"}},
                   {{"sourceLabels", {"__tmp_mine"}}, {"regex", "$(SHARD)"}, {"action", "keep"}}});
  const emulator::ScrapeObjects objects{
      .probes = {probe(150)},
      .scrape_configs = {scrapeConfig("static", 400, 1, Json::array()),
                         scrapeConfig("own", 100, 2, own_rules)}};
  std::vector<resharding::ScrapeObject> read;
  read.reserve(objects.probes.size() + objects.scrape_configs.size());
  for (const Json& p : objects.probes) {
    read.push_back(resharding::readScrapeObject(resharding::ScrapeKind::Probe, p));
  }
  for (const Json& s : objects.scrape_configs) {
    read.push_back(resharding::readScrapeObject(resharding::ScrapeKind::ScrapeConfig, s));
  }
  Json target{{"metadata", {{"name", "main"}, {"namespace", "it"}, {"uid", "u"}}},
              {"spec",
               {{"shards", kShards},
                {"probeSelector", Json::object()},
                {"scrapeConfigSelector", Json::object()}}}};
  const auto out = resharding::planResharding({.mode = resharding::Mode::LowChurn,
                                               .target = resharding::readTargetScrapeSpec(target),
                                               .current_shards = kShards,
                                               .shards = kShards,
                                               .objects = read});
  ASSERT_TRUE(out.scrape_classes && out.rules) << out.message;
  target["spec"]["scrapeClasses"] = *out.scrape_classes;
  auto config = emulator::generateConfiguration(emulator::prometheusKind(), target, "", objects);
  ASSERT_TRUE(config) << config.error().message;

  testenv::ShardFleet fleet("relabel");
  std::map<int, std::string> pods;
  for (int i = 0; i < kShards + 1; ++i) pods[i] = "pod-" + std::to_string(i);  // + a retained one
  fleet.apply(*config, pods);
  const auto seen = fleet.settledTargets();

  const auto& table = out.rules->table;
  const auto tableShard = [&](const std::string& key) {
    return table.shard_of_bucket[resharding::hashmod(key, static_cast<uint64_t>(table.buckets()))];
  };
  std::map<std::string, int> shard_of;
  for (const auto& [index, targets] : seen) {
    for (const std::string& t : targets) {
      EXPECT_TRUE(shard_of.emplace(t, index).second) << t << " on two shards";
    }
  }
  EXPECT_TRUE(seen.at(kShards).empty()) << "a shard at or above spec.shards scrapes";
  EXPECT_EQ(shard_of.size(), 400u + 100u + 150u);
  for (const auto& [t, index] : shard_of) {
    const std::string pool = t.substr(0, t.find('|'));
    const std::string key = t.substr(t.find('|') + 1);
    if (pool == "scrapeConfig/it/own") {
      EXPECT_EQ(index, static_cast<int>(resharding::hashmod(key, kShards))) << t;
    } else {
      EXPECT_EQ(index, tableShard(key)) << t;
    }
  }
}

}  // namespace
}  // namespace shardscaler
