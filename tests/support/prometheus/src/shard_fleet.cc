#include "shardscaler/testenv/shard_fleet.h"

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "shardscaler/test_kit/http_get.h"

namespace shardscaler::testenv {
namespace {

using Clock = std::chrono::steady_clock;

// Counts a scrape pool's syncs: each one relabels the pool's discovered targets with the
// configuration in force.
constexpr const char* kSyncs = "prometheus_target_scrape_pool_sync_total";

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

// A label value as the text exposition format writes it.
std::string escaped(const std::string& value) {
  return replaceAll(replaceAll(replaceAll(value, "\\", "\\\\"), "\"", "\\\""), "\n", "\\n");
}

// The syncs of each of `jobs` so far (0 for a pool that has none yet).
std::map<std::string, double> syncsOf(const PrometheusProcess& process,
                                      const std::vector<std::string>& jobs) {
  const auto answer =
      test_kit::httpGet(process.url() + "/metrics", {.timeout = std::chrono::seconds(10)});
  if (answer.status != 200) {
    throw std::runtime_error(process.name() + ": /metrics answered " +
                             std::to_string(answer.status) + " " + answer.error);
  }
  std::map<std::string, double> out;
  for (const std::string& job : jobs) {
    const std::string series =
        "\n" + std::string(kSyncs) + "{scrape_job=\"" + escaped(job) + "\"} ";
    const size_t at = answer.body.find(series);
    out[job] = at == std::string::npos
                   ? 0
                   : std::strtod(answer.body.c_str() + at + series.size(), nullptr);
  }
  return out;
}

}  // namespace

struct ShardFleet::Shard {
  std::string config;  // as substituted
  std::vector<std::string> jobs;
  std::unique_ptr<PrometheusProcess> process;
  // Each pool's syncs when its configuration was last applied; a pool must sync past them before
  // its targets are those of that configuration. Empty once it has.
  std::map<std::string, double> applied_at;
};

ShardFleet::ShardFleet(std::string name) : name_(std::move(name)) {}
ShardFleet::~ShardFleet() = default;

std::string ShardFleet::substitute(const std::string& config_yaml, int index,
                                   const std::string& pod) {
  return replaceAll(replaceAll(config_yaml, "$(SHARD)", std::to_string(index)), "$(POD_NAME)", pod);
}

std::vector<std::string> ShardFleet::jobNames(const std::string& config_yaml) {
  std::vector<std::string> out;
  const YAML::Node jobs = YAML::Load(config_yaml)["scrape_configs"];
  if (!jobs.IsSequence()) return out;
  for (const auto& job : jobs) out.push_back(job["job_name"].as<std::string>());
  return out;
}

void ShardFleet::apply(const std::string& config_yaml, const std::map<int, std::string>& pods) {
  for (auto it = shards_.begin(); it != shards_.end();) {
    it = pods.contains(it->first) ? std::next(it) : shards_.erase(it);
  }
  std::vector<Shard*> reloading;
  for (const auto& [index, pod] : pods) {
    const std::string config = substitute(config_yaml, index, pod);
    auto& shard = shards_[index];
    if (!shard) {
      shard = std::make_unique<Shard>();
      shard->config = config;
      shard->jobs = jobNames(config);
      shard->process = std::make_unique<PrometheusProcess>(PrometheusOptions{
          .name = name_ + "-shard-" + std::to_string(index), .config_yaml = config});
      for (const std::string& job : shard->jobs) shard->applied_at[job] = 0;
    } else if (shard->config != config) {
      shard->config = config;
      shard->jobs = jobNames(config);
      reloading.push_back(shard.get());
    }
  }
  // A reload takes a second or more (PrometheusProcess::reload); the shards take theirs together.
  std::vector<std::exception_ptr> failures(reloading.size());
  std::vector<std::thread> threads;
  threads.reserve(reloading.size());
  for (size_t i = 0; i < reloading.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        Shard& shard = *reloading[i];
        // Counted before the reload: the sync it brings can come before reload() sees it done,
        // and counted after, the pool would wait for a sync that never comes.
        shard.applied_at = syncsOf(*shard.process, shard.jobs);
        shard.process->reload(shard.config);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

ShardTargets ShardFleet::targetsOf(const Shard& shard) const {
  const auto answer = test_kit::httpGet(shard.process->url() + "/api/v1/targets?state=active",
                                        {.timeout = std::chrono::seconds(10)});
  if (answer.status != 200) {
    throw std::runtime_error(shard.process->name() + ": /api/v1/targets answered " +
                             std::to_string(answer.status) + " " + answer.error);
  }
  const auto body = nlohmann::json::parse(answer.body);
  ShardTargets out;
  for (const auto& target : body.at("data").at("activeTargets")) {
    out.insert(target.at("scrapePool").get<std::string>() + "|" +
               target.at("discoveredLabels").at("__address__").get<std::string>());
  }
  return out;
}

std::map<int, ShardTargets> ShardFleet::settledTargets(std::chrono::milliseconds deadline) {
  const auto give_up = Clock::now() + deadline;
  for (const auto& [index, shard] : shards_) {
    while (!shard->applied_at.empty()) {
      const auto now = syncsOf(*shard->process, shard->jobs);
      std::erase_if(shard->applied_at,
                    [&](const auto& pool) { return now.at(pool.first) > pool.second; });
      if (shard->applied_at.empty()) break;
      if (Clock::now() > give_up) {
        throw std::runtime_error(shard->process->name() + ": scrape pool \"" +
                                 shard->applied_at.begin()->first + "\" did not sync within " +
                                 std::to_string(deadline.count()) + " ms of its configuration");
      }
      // Prometheus syncs on its own 5 s ticks; its /metrics is the only sign.
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  std::map<int, ShardTargets> out;
  for (const auto& [index, shard] : shards_) out[index] = targetsOf(*shard);
  return out;
}

}  // namespace shardscaler::testenv
