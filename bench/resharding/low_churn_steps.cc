// Moved targets per scale step, Operator against LowChurn, with real Prometheus shards: the same
// targets in one ScrapeConfig, the configuration the operator emulator generates for N shards
// (with, for LowChurn, the scrape classes resharding::planResharding writes for that step, read
// back from the target as shardscaler does), one `prometheus` per shard with $(SHARD) substituted,
// and which targets each one scrapes read from its /api/v1/targets. Steps 1 -> 9 -> 1. Prints,
// per step, the fraction of targets that changed shard and the busiest shard's targets over the
// mean, for each mode; and whether every target was scraped by exactly one shard.
//
// usage: resharding_low_churn_steps [TARGETS=1000] [static|discovered] [MAX_SHARDS=9]
// `discovered` serves the targets through HTTP service discovery (the table then balances bucket
// counts, not known targets).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "prometheus_config.h"
#include "scrape_jobs.h"
#include "shardscaler/resharding/resharding.h"
#include "shardscaler/test_kit/test_http_server.h"
#include "shardscaler/testenv/shard_fleet.h"
#include "target_kind.h"

namespace {

using Json = nlohmann::json;
using shardscaler::testenv::ShardFleet;
using shardscaler::testenv::ShardTargets;
namespace emulator = shardscaler::emulator;
namespace resharding = shardscaler::resharding;

std::vector<std::string> targetAddresses(int count) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    out.push_back("127.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ":9");
  }
  return out;
}

struct Step {
  int shards = 0;
  std::map<std::string, int> shard_of;  // target -> the shard that scrapes it
  bool exactly_once = true;
  double busiest = 0;  // max / mean targets per shard
};

Step observe(ShardFleet& fleet, const std::string& config, int shards, size_t total) {
  std::map<int, std::string> pods;
  for (int i = 0; i < shards; ++i) pods[i] = "prometheus-bench-" + std::to_string(i) + "-0";
  fleet.apply(config, pods);
  Step step{.shards = shards};
  int most = 0;
  for (const auto& [index, targets] : fleet.settledTargets()) {
    most = std::max(most, static_cast<int>(targets.size()));
    for (const std::string& t : targets) {
      if (!step.shard_of.emplace(t, index).second) step.exactly_once = false;
    }
  }
  if (step.shard_of.size() != total) step.exactly_once = false;
  step.busiest = most * static_cast<double>(shards) / static_cast<double>(total);
  return step;
}

double moved(const Step& a, const Step& b) {
  size_t n = 0;
  for (const auto& [t, s] : b.shard_of) {
    auto it = a.shard_of.find(t);
    if (it == a.shard_of.end() || it->second != s) ++n;
  }
  return static_cast<double>(n) / static_cast<double>(b.shard_of.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::stoi(argv[1]) : 1000;
  const bool discovered = argc > 2 && std::string(argv[2]) == "discovered";
  const int max_shards = argc > 3 ? std::stoi(argv[3]) : 9;
  const auto addresses = targetAddresses(count);

  std::optional<shardscaler::test_kit::HttpServer> sd;
  Json scrape_config{{"metadata", {{"namespace", "bench"}, {"name", "targets"}}},
                     {"spec", {{"scrapeInterval", "1h"}}}};
  if (discovered) {
    Json groups = Json::array({{{"targets", addresses}, {"labels", Json::object()}}});
    sd.emplace([body = groups.dump()](const shardscaler::test_kit::HttpRequest&) {
      return shardscaler::test_kit::HttpResponse{.status = 200, .body = body};
    });
    scrape_config["spec"]["httpSDConfigs"] =
        Json::array({{{"url", "http://127.0.0.1:" + std::to_string(sd->port()) + "/sd"},
                      {"refreshInterval", "1h"}}});
  } else {
    scrape_config["spec"]["staticConfigs"] = Json::array({{{"targets", addresses}}});
  }
  const emulator::ScrapeObjects objects{.scrape_configs = {scrape_config}};
  const resharding::ScrapeObject covered =
      resharding::readScrapeObject(resharding::ScrapeKind::ScrapeConfig, scrape_config);

  std::vector<int> sequence;
  for (int n = 1; n <= max_shards; ++n) sequence.push_back(n);
  for (int n = max_shards - 1; n >= 1; --n) sequence.push_back(n);

  std::map<std::string, std::vector<Step>> runs;
  for (const std::string mode : {"Operator", "LowChurn"}) {
    ShardFleet fleet("bench-" + mode);
    Json target{{"metadata", {{"name", "bench"}, {"namespace", "bench"}, {"uid", "u"}}},
                {"spec", {{"scrapeConfigSelector", Json::object()}}}};
    for (int shards : sequence) {
      const int from = runs[mode].empty() ? shards : runs[mode].back().shards;
      target["spec"]["shards"] = shards;
      if (mode == "LowChurn") {
        resharding::ReshardingInput in{.mode = resharding::Mode::LowChurn,
                                       .target = resharding::readTargetScrapeSpec(target),
                                       .current_shards = from,
                                       .shards = shards,
                                       .objects = std::vector{covered}};
        const auto out = resharding::planResharding(in);
        if (out.scrape_classes) target["spec"]["scrapeClasses"] = *out.scrape_classes;
      }
      auto config =
          emulator::generateConfiguration(emulator::prometheusKind(), target, "", objects);
      if (!config) {
        std::cerr << "generating the configuration failed: " << config.error().message << "\n";
        return 1;
      }
      runs[mode].push_back(observe(fleet, *config, shards, addresses.size()));
      std::cerr << mode << ": " << shards << " shards observed\n";
    }
  }

  std::printf("%d %s targets, one ScrapeConfig, real Prometheus shards\n", count,
              discovered ? "discovered (HTTP SD)" : "static");
  std::printf("%-8s | %-8s %-8s | %-6s | %-10s %-10s | %s\n", "step", "Operator", "LowChurn",
              "bound", "Op max/avg", "LC max/avg", "each target on one shard");
  const auto& op = runs["Operator"];
  const auto& lc = runs["LowChurn"];
  for (size_t i = 1; i < op.size(); ++i) {
    const int a = op[i - 1].shards;
    const int b = op[i].shards;
    std::printf("%2d -> %-2d | %7.1f%% %7.1f%% | %5.1f%% | %10.3f %10.3f | %s\n", a, b,
                100 * moved(op[i - 1], op[i]), 100 * moved(lc[i - 1], lc[i]),
                100 * (1.0 / std::max(a, b) + 0.02), op[i].busiest, lc[i].busiest,
                op[i].exactly_once && lc[i].exactly_once ? "yes" : "NO");
  }
  return 0;
}
