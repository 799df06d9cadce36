// libFuzzer target: Prometheus durations (retentionPeriod on a ShardSet or its target), read from
// objects anyone with write access to them controls. Never reads anything but its input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "shardscaler/planner/duration.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shardscaler::planner::formatPrometheusDuration;
  using shardscaler::planner::parsePrometheusDuration;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parsePrometheusDuration(text);
  if (!parsed) return 0;
  // What parses formats to a text that parses back to the same duration.
  auto again = parsePrometheusDuration(formatPrometheusDuration(*parsed));
  if (!again || *again != *parsed) std::abort();
  return 0;
}
