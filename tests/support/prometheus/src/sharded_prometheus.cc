#include "shardscaler/testenv/sharded_prometheus.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/test_kit/http_get.h"
#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::testenv {
namespace {

using test_kit::httpGet;
using test_kit::HttpGetResult;
using test_kit::urlEncode;

constexpr const char* kScrapeJob = "prometheus-operated";
constexpr int kPrometheusPort = 9090;

// Whether <host>:9090 can be bound now (a moment later another process may take it; the start
// then fails).
bool bindable(const std::string& host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(kPrometheusPort);
  const bool ok = ::inet_pton(AF_INET, host.c_str(), &address.sin_addr) == 1 &&
                  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// `count` loopback addresses in one random block of 127.0.0.0/8 whose port 9090 is free.
std::vector<std::string> freeLoopbackHosts(int count) {
  std::mt19937 random{std::random_device{}()};
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int b = 1 + static_cast<int>(random() % 254);
    const int c = 1 + static_cast<int>(random() % 254);
    std::vector<std::string> hosts;
    hosts.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      hosts.push_back("127." + std::to_string(b) + "." + std::to_string(c) + "." +
                      std::to_string(10 + i));
    }
    if (std::ranges::all_of(hosts, bindable)) return hosts;
  }
  throw std::runtime_error("no free block of loopback addresses for port 9090");
}

std::string millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

struct ShardedPrometheus::State {
  ShardedPrometheusOptions options;
  // Declared before the processes, so the directory goes only after they have stopped.
  std::optional<test_kit::TempDir> temporary_dir;
  std::filesystem::path work_dir;
  // shards[i][r]
  std::vector<std::vector<std::unique_ptr<PrometheusProcess>>> shards;
  std::vector<bool> idle;  // shards set to scrape nothing (setScraping)
  std::unique_ptr<PrometheusProcess> scraper;

  std::string prefix() const { return options.agent ? "prom-agent" : "prometheus"; }
  std::string statefulSetName(int shard) const {
    std::string name = prefix() + "-" + options.name;
    if (shard > 0) name += "-shard-" + std::to_string(shard);
    return name;
  }
  std::string podName(int shard, int replica) const {
    return statefulSetName(shard) + "-" + std::to_string(replica);
  }

  std::string shardConfig(int shard, int replica) const {
    const auto interval = options.load_interval / (shard + 1);
    std::string yaml =
        "global:\n  scrape_interval: " + millis(interval) +
        "\n  scrape_timeout: " + millis(interval) + "\n  evaluation_interval: " + millis(interval) +
        "\n  external_labels:\n    prometheus: " + quoted(options.ns + "/" + options.name) +
        "\n    prometheus_replica: " + quoted(podName(shard, replica)) + "\nscrape_configs:";
    const int jobs = idle[shard] ? 0 : options.load_jobs;
    if (jobs == 0) yaml += " []";
    yaml += '\n';
    for (int job = 0; job < jobs; ++job) {
      yaml += "- job_name: load-" + std::to_string(job) +
              "\n  static_configs:\n  - targets: ['@SELF@']\n";
    }
    if (!options.remote_write_url.empty()) {
      yaml += "remote_write:\n- url: " + quoted(options.remote_write_url) +
              "\n  name: receiver\n  queue_config: {capacity: 2500, max_shards: 4, min_shards: 1, "
              "max_samples_per_send: 500, batch_send_deadline: 1s, min_backoff: 100ms, "
              "max_backoff: 1s}\n";
    }
    return yaml;
  }

  std::string scraperConfig() const {
    const std::string interval = millis(options.scrape_interval);
    std::string yaml = "global:\n  scrape_interval: " + interval +
                       "\n  scrape_timeout: " + interval + "\n  evaluation_interval: " + interval +
                       "\nscrape_configs:\n- job_name: " + kScrapeJob + "\n  static_configs:\n";
    for (int shard = 0; shard < options.shards; ++shard) {
      for (int replica = 0; replica < options.replicas; ++replica) {
        yaml += "  - targets: ['" + shards[shard][replica]->address() +
                "']\n    labels:\n      namespace: " + quoted(options.ns) +
                "\n      pod: " + quoted(podName(shard, replica)) +
                "\n      container: prometheus\n      service: prometheus-operated\n";
      }
    }
    return yaml;
  }
};

ShardedPrometheus::ShardedPrometheus(ShardedPrometheusOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  if (s.options.shards < 1 || s.options.replicas < 1 || s.options.load_jobs < 0) {
    throw std::invalid_argument(
        "ShardedPrometheus needs shards >= 1, replicas >= 1, load_jobs >= 0");
  }
  if (s.options.work_dir.empty()) {
    s.temporary_dir.emplace("shardscaler-sharded-prometheus-");
    if (std::getenv("SHARDSCALER_KEEP_TEST_DIRS") != nullptr) s.temporary_dir->keep();
    s.work_dir = s.temporary_dir->path();
  } else {
    s.work_dir = s.options.work_dir;
    std::filesystem::create_directories(s.work_dir);
  }
  // On a throw, state_ goes with the processes started so far and then the temporary dir.
  s.shards.resize(s.options.shards);
  s.idle.assign(s.options.shards, false);
  const std::vector<std::string> hosts =
      s.options.own_addresses ? freeLoopbackHosts(s.options.shards * s.options.replicas)
                              : std::vector<std::string>{};
  for (int shard = 0; shard < s.options.shards; ++shard) {
    for (int replica = 0; replica < s.options.replicas; ++replica) {
      const std::string pod = s.podName(shard, replica);
      s.shards[shard].push_back(std::make_unique<PrometheusProcess>(PrometheusOptions{
          .name = pod,
          .config_yaml = s.shardConfig(shard, replica),
          .agent = s.options.agent,
          .extra_flags = s.options.remote_write_url.empty()
                             ? std::vector<std::string>{}
                             : std::vector<std::string>{"--storage.remote.flush-deadline=3s"},
          .work_dir = s.work_dir / pod,
          .host = hosts.empty() ? "127.0.0.1" : hosts[shard * s.options.replicas + replica],
          .port = hosts.empty() ? 0 : kPrometheusPort}));
    }
  }
  if (s.options.scraper) {
    s.scraper = std::make_unique<PrometheusProcess>(PrometheusOptions{
        .name = "scraper", .config_yaml = s.scraperConfig(), .work_dir = s.work_dir / "scraper"});
  }
}

ShardedPrometheus::~ShardedPrometheus() {
  // The scraper first (when there is one), so it never scrapes a shard that is already gone.
  state_->scraper.reset();
  state_->shards.clear();
}

const ShardedPrometheusOptions& ShardedPrometheus::options() const { return state_->options; }
int ShardedPrometheus::shards() const { return state_->options.shards; }
int ShardedPrometheus::replicas() const { return state_->options.replicas; }

std::string ShardedPrometheus::statefulSetName(int shard) const {
  return state_->statefulSetName(shard);
}
std::string ShardedPrometheus::podName(int shard, int replica) const {
  return state_->podName(shard, replica);
}

std::string ShardedPrometheus::podRegex() const {
  std::string regex;
  for (int shard = 0; shard < shards(); ++shard) {
    for (int replica = 0; replica < replicas(); ++replica) {
      if (!regex.empty()) regex += '|';
      regex += podName(shard, replica);
    }
  }
  return regex;
}

PrometheusProcess& ShardedPrometheus::shard(int shard, int replica) {
  return *state_->shards.at(shard).at(replica);
}
PrometheusProcess* ShardedPrometheus::shardOfPod(const std::string& pod) {
  for (int shard = 0; shard < shards(); ++shard) {
    for (int replica = 0; replica < replicas(); ++replica) {
      if (podName(shard, replica) == pod) return state_->shards[shard][replica].get();
    }
  }
  return nullptr;
}
PrometheusProcess& ShardedPrometheus::scraper() {
  if (!state_->scraper) throw std::logic_error("ShardedPrometheus runs without a scraper");
  return *state_->scraper;
}
std::string ShardedPrometheus::scraperUrl() const {
  if (!state_->scraper) throw std::logic_error("ShardedPrometheus runs without a scraper");
  return state_->scraper->url();
}

void ShardedPrometheus::setLoad(int load_jobs, std::chrono::milliseconds load_interval) {
  if (load_jobs < 0 || load_interval <= std::chrono::milliseconds(0)) {
    throw std::invalid_argument("ShardedPrometheus::setLoad needs load_jobs >= 0, interval > 0");
  }
  State& s = *state_;
  s.options.load_jobs = load_jobs;
  s.options.load_interval = load_interval;
  for (int shard = 0; shard < shards(); ++shard) {
    for (int replica = 0; replica < replicas(); ++replica) {
      s.shards[shard][replica]->reload(s.shardConfig(shard, replica));
    }
  }
}

void ShardedPrometheus::setScraping(int shard, bool scraping) {
  State& s = *state_;
  if (shard < 0 || shard >= shards()) {
    throw std::runtime_error("ShardedPrometheus::setScraping: no shard " + std::to_string(shard));
  }
  s.idle[shard] = !scraping;
  for (int replica = 0; replica < replicas(); ++replica) {
    s.shards[shard][replica]->reload(s.shardConfig(shard, replica));
  }
}

bool ShardedPrometheus::scraping(int shard) const { return !state_->idle.at(shard); }

void ShardedPrometheus::reloadShard(int shard) {
  State& s = *state_;
  if (shard < 0 || shard >= shards()) {
    throw std::runtime_error("ShardedPrometheus::reloadShard: no shard " + std::to_string(shard));
  }
  for (int replica = 0; replica < replicas(); ++replica) {
    s.shards[shard][replica]->reload(s.shardConfig(shard, replica));
  }
}

void ShardedPrometheus::waitForScrapes(int samples, std::chrono::milliseconds deadline) const {
  const std::string query = "count_over_time(up{job=\"" + std::string(kScrapeJob) +
                            "\",namespace=\"" + state_->options.ns + "\"}[1h])";
  const std::string url = scraperUrl() + "/api/v1/query?query=" + urlEncode(query);
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string last;
  while (true) {
    HttpGetResult r = httpGet(url, {.timeout = std::chrono::milliseconds(5000)});
    std::map<std::string, double> counts;
    if (r.status == 200) {
      auto body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
      if (body.is_object() && body.value("status", "") == "success") {
        for (const auto& series : body["data"]["result"]) {
          counts[series["metric"].value("pod", "")] =
              std::stod(series["value"][1].get<std::string>());
        }
      }
    }
    bool all = true;
    last.clear();
    for (int shard = 0; shard < shards(); ++shard) {
      for (int replica = 0; replica < replicas(); ++replica) {
        const std::string pod = podName(shard, replica);
        const double have = counts.count(pod) ? counts[pod] : 0;
        all = all && have >= samples;
        last += " " + pod + "=" + std::to_string(static_cast<int>(have));
      }
    }
    if (all) return;
    if (std::chrono::steady_clock::now() >= until) {
      throw std::runtime_error("the scraper at " + scraperUrl() + " has not scraped every pod " +
                               std::to_string(samples) + " times within " +
                               std::to_string(deadline.count()) + "ms; samples so far:" + last +
                               (r.status == 0 ? " (query failed: " + r.error + ")" : ""));
    }
    // Polls the scraper's API until the deadline; scrapes happen on its own schedule.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace shardscaler::testenv
