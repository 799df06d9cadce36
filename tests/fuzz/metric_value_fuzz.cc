// libFuzzer target: the external metrics' values computed from a ShardSet object (its status is
// written by shardscaler, but a ShardSet is read back from the API server, where anyone with
// write access to its status could have put anything). Every kind, and the list an HPA reads.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/metrics_api/external_metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace api = shardscaler::metrics_api;
  const nlohmann::json shard_set = shardscaler::fuzz::json(shardscaler::fuzz::text(data, size));
  if (shard_set.is_discarded()) return 0;
  // 2027-01-15T08:00:00Z, the time of the seeds' lastUpdate.
  const std::chrono::system_clock::time_point now{std::chrono::seconds(1'800'000'000)};
  for (const api::MetricInfo& info : api::metricInfos()) {
    auto value = api::metricValue(shard_set, info.kind, now, {});
    if (!value) continue;
    // A value is never negative: an HPA would read it as less load than none.
    if (value->value.milli < 0) __builtin_trap();
    (void)api::externalMetricValueList(info.name, {*value}).dump();
  }
  return 0;
}
