// libFuzzer target: the objects shardscaler decodes from the API server, whose content users
// wrote (a CRD's schema checks only what it declares): ShardSets, with their
// spec.ingestion.prometheusURL against the URL policy; Prometheus and PrometheusAgent targets;
// StatefulSets, whose labels and annotations anyone with `patch statefulsets` may write. Every
// input goes through every decoder.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/api/shard_set.h"
#include "shardscaler/api/well_known.h"
#include "shardscaler/ingestion/prometheus_url_policy.h"
#include "shardscaler/planner/deadline.h"
#include "shardscaler/planner/naming.h"
#include "shardscaler/planner/stateful_set.h"
#include "shardscaler/planner/target.h"

namespace {

namespace ingestion = shardscaler::ingestion;
namespace planner = shardscaler::planner;

void decodeShardSet(const nlohmann::json& object) {
  auto shard_set = shardscaler::api::decodeShardSet(object);
  if (!shard_set) return;
  (void)shardscaler::api::toJson(shard_set->spec).dump();
  for (const auto& e : shard_set->spec_errors) (void)e.describe();
  for (const auto& e : shard_set->ingestion_errors) (void)e.describe();
  if (!shard_set->spec.ingestion || !shard_set->spec.ingestion->prometheus_url) return;
  const std::string& url = *shard_set->spec.ingestion->prometheus_url;
  static const ingestion::PrometheusUrlPolicy policy = *ingestion::PrometheusUrlPolicy::make(
      {"http://*.svc:9090", "https://thanos.example/prom", "http://127.0.0.1:*"},
      R"(https://[a-z]+\.mimir\.example(/[a-z]+)*)");
  if (!policy.refusal(url)) {
    // Allowed: nothing after the host can change where the request goes or what it asks.
    if (url.find_first_of("?#@\\% ") != std::string::npos) __builtin_trap();
    for (std::string_view dots : {"/../", "/./"}) {
      if (url.find(dots) != std::string::npos) __builtin_trap();
    }
    if (url.ends_with("/..") || url.ends_with("/.")) __builtin_trap();
  }
  (void)ingestion::UrlPattern::parse(url);
}

void decodeTarget(const nlohmann::json& object) {
  for (planner::TargetKind kind :
       {planner::TargetKind::Prometheus, planner::TargetKind::PrometheusAgent}) {
    auto target = planner::parseTarget(object, kind);
    if (!target) continue;
    const int32_t shards = target->effectiveShards();
    if (shards < 1) __builtin_trap();  // the operator runs at least one
    (void)target->topologyZones();
    (void)target->pauseAcknowledged();
    (void)target->pausedBy("main");
    (void)target->stalePausedBy("main");
    for (const auto& e : target->spec_errors) (void)e.describe();
  }
}

void decodeStatefulSet(const nlohmann::json& object) {
  auto sts = planner::parseStatefulSet(object);
  if (!sts) return;
  if (const std::string* shard = sts->label(shardscaler::api::kOperatorShardLabel)) {
    (void)planner::parseShardIndex(*shard);
  }
  if (const std::string* deadline =
          sts->annotation(shardscaler::api::kDeletionTimestampAnnotation)) {
    (void)planner::parseDeletionTimestamp(*deadline);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json object = shardscaler::fuzz::json(shardscaler::fuzz::text(data, size));
  if (object.is_discarded()) return 0;
  decodeShardSet(object);
  decodeTarget(object);
  decodeStatefulSet(object);
  return 0;
}
