#include "shardscaler/ingestion/shard_pod_reader.h"

#include <algorithm>
#include <future>
#include <map>
#include <stdexcept>
#include <utility>

#include "shardscaler/api/well_known.h"
#include "shardscaler/k8s_meta/object_meta.h"

namespace shardscaler::ingestion {
namespace {

using Json = nlohmann::json;

using k8s::meta::member;
using k8s::meta::stringOf;

// The shard index of a StatefulSet named as one of the target's, by the operator's naming.
std::optional<int32_t> shardOfStatefulSet(planner::TargetKind kind, std::string_view target,
                                          std::string_view name) {
  const std::string zero = planner::statefulSetName(kind, target, 0);
  if (name == zero) return 0;
  const std::string prefix = zero + "-shard-";
  if (!name.starts_with(prefix)) return std::nullopt;
  auto index = planner::parseShardIndex(name.substr(prefix.size()));
  if (!index || *index == 0) return std::nullopt;
  return index;
}

// Client certificates the target requires of every client.
bool requiresClientCertificate(const std::string& client_auth_type) {
  return client_auth_type == "RequireAnyClientCert" ||
         client_auth_type == "RequireAndVerifyClientCert";
}

}  // namespace

ShardPodReader::ShardPodReader(k8s::KubeClient& client, const k8s::Clock& clock,
                               ShardPodReaderOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      pool_(static_cast<std::size_t>(std::max(options_.threads, 1))) {
  options_.per_shard_set = std::max(options_.per_shard_set, 1);
  auto scraper = promql::MetricsScraper::create(options_.scraper);
  if (!scraper) throw std::invalid_argument(scraper.error().describe());
  scraper_ = std::move(*scraper);
}

ShardPodReader::~ShardPodReader() = default;

std::string ShardPodReader::unsupported(const ShardSource& source) const {
  if (source.tls.https && requiresClientCertificate(source.tls.client_auth_type) &&
      options_.tls_cert_file.empty()) {
    return std::string(planner::toString(source.kind)) + " " + source.target_name +
           " requires a client certificate (spec.web.tlsConfig.clientAuthType " +
           source.tls.client_auth_type +
           ") and shardscaler has none (--shard-metrics-tls-cert-file, "
           "--shard-metrics-tls-key-file)";
  }
  return "";
}

Expected<std::vector<ShardReading>> ShardPodReader::readTarget(const ShardSource& source) {
  std::map<std::string, Json> found;  // by name
  for (const std::string& selector :
       {std::string(api::kOperatorNameLabel) + "=" + source.target_name,
        std::string(api::kShardSetLabel) + "=" + source.shard_set}) {
    auto listed = k8s::listAll(client_, k8s::resources::statefulSets(), source.ns,
                               {.label_selector = selector});
    if (!listed) {
      return std::unexpected("cannot list the shards' StatefulSets: " + listed.error().describe());
    }
    for (const Json& item : member(*listed, "items")) {
      const std::string name = stringOf(member(member(item, "metadata"), "name"));
      if (shardOfStatefulSet(source.kind, source.target_name, name)) found[name] = item;
    }
  }
  std::vector<Json> stateful_sets;
  stateful_sets.reserve(found.size());
  for (auto& [name, object] : found) stateful_sets.push_back(std::move(object));
  return readShards(source, stateful_sets);
}

Expected<std::vector<ShardReading>> ShardPodReader::readShards(
    const ShardSource& source, std::span<const Json> stateful_sets) {
  auto listed = k8s::listAll(
      client_, k8s::resources::pods(), source.ns,
      {.label_selector = std::string(api::kOperatorNameLabel) + "=" + source.target_name});
  if (!listed) return std::unexpected("cannot list the shards' pods: " + listed.error().describe());
  const Json& items = member(*listed, "items");
  const std::vector<Json> pods =
      items.is_array() ? items.get<std::vector<Json>>() : std::vector<Json>{};

  std::vector<ShardReading> shards;
  struct Pending {
    size_t shard;
    const ShardPod* pod;
    std::string service;
  };
  std::vector<Pending> to_read;
  for (const Json& sts : stateful_sets) {
    const std::string name = stringOf(member(member(sts, "metadata"), "name"));
    auto index = shardOfStatefulSet(source.kind, source.target_name, name);
    if (!index) continue;
    shards.push_back({.index = *index, .pods = shardPods(sts, pods), .readings = {}});
  }
  std::ranges::sort(shards, {}, &ShardReading::index);
  // The governing Service names the pods in their certificates: <pod>.<service>.<ns>.svc.
  std::map<std::string, std::string, std::less<>> services;
  for (const Json& sts : stateful_sets) {
    services[stringOf(member(member(sts, "metadata"), "name"))] =
        stringOf(member(member(sts, "spec"), "serviceName"));
  }
  for (size_t s = 0; s < shards.size(); ++s) {
    for (const ShardPod& pod : shards[s].pods.pods) {
      if (pod.mayRun()) to_read.push_back({s, &pod, services[shards[s].pods.stateful_set]});
    }
  }
  std::vector<std::vector<PodReading>> readings(shards.size());
  const auto batch = static_cast<size_t>(options_.per_shard_set);
  for (size_t from = 0; from < to_read.size(); from += batch) {
    std::vector<std::pair<size_t, std::future<PodReading>>> running;
    for (size_t i = from; i < std::min(from + batch, to_read.size()); ++i) {
      const Pending p = to_read[i];
      running.emplace_back(
          p.shard, pool_.submit([this, &source, p] { return scrape(source, *p.pod, p.service); }));
    }
    for (auto& [shard, future] : running) readings[shard].push_back(future.get());
  }
  for (size_t s = 0; s < shards.size(); ++s) shards[s].readings = std::move(readings[s]);
  return shards;
}

PodReading ShardPodReader::scrape(const ShardSource& source, const ShardPod& pod,
                                  const std::string& service_name) {
  PodReading reading{.pod = pod, .at = clock_.now(), .metrics = std::unexpected(std::string())};
  auto fail = [&](std::string why) {
    reading.metrics = std::unexpected("pod " + pod.name +
                                      " runs but its metrics cannot be read: " + std::move(why));
    return reading;
  };
  if (pod.ip.empty()) return fail("it has no IP");
  if (!pod.web_port) {
    return fail("it declares no container port named " + std::string(kWebPortName));
  }
  if (auto why = unsupported(source); !why.empty()) return fail(why);
  promql::ScrapeTarget target{.address = pod.ip, .port = *pod.web_port};
  if (source.tls.https) {
    target.tls = promql::ScrapeTls{
        .ca_file = options_.tls_ca_file,
        .client_cert_file = options_.tls_cert_file,
        .client_key_file = options_.tls_key_file,
        .server_name = service_name.empty()
                           ? std::string()
                           : pod.name + "." + service_name + "." + source.ns + ".svc"};
  }
  auto samples = scraper_->scrape(target, podMetricWanted);
  reading.at = clock_.now();
  if (!samples) return fail(samples.error().describe());
  reading.answered = true;
  auto metrics = readPodMetrics(*samples, source.kind);
  if (!metrics) return fail(metrics.error());
  reading.metrics = std::move(*metrics);
  return reading;
}

}  // namespace shardscaler::ingestion
