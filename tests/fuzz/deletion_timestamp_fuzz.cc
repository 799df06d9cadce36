// libFuzzer target: the deletion-timestamp annotation on retained shards and the instants
// shardscaler stamps (paused-at, detached-at), which anyone who may label a StatefulSet can set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shardscaler/planner/deadline.h"

namespace {

// RFC3339 text holds years 0000..9999 in UTC. An offset can name an instant just outside
// ("9999-12-31T23:59:59-23:59" is year 10000 in UTC), which Go's time.Parse and ours read, but
// which no RFC3339 UTC text can write back: the round trip holds inside the range only.
bool writableInUtc(const shardscaler::k8s::Timestamp& t) {
  using shardscaler::k8s::parseRfc3339;
  static const auto first = parseRfc3339("0000-01-01T00:00:00Z").value();
  static const auto last = parseRfc3339("9999-12-31T23:59:59.999999999Z").value();
  return first <= t && t <= last;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardscaler::planner;
  using shardscaler::k8s::parseRfc3339;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto deadline = parseDeletionTimestamp(text);
  if (deadline && (deadline->isNever() || writableInUtc(deadline->time()))) {
    // A deadline read is written back as one that reads the same.
    auto again = parseDeletionTimestamp(deadline->toAnnotation());
    if (!again || *again != *deadline) std::abort();
  }
  if (auto t = parseRfc3339(text); t && writableInUtc(*t)) {
    auto again = parseRfc3339(shardscaler::k8s::formatRfc3339(*t));
    if (!again || *again != *t) std::abort();
  }
  const std::string owned(text);
  (void)parseAnnotationTime(&owned);
  return 0;
}
