// libFuzzer target: the deletion-timestamp annotation on retained shards and the instants
// shardscaler stamps (paused-at, detached-at), which anyone who may label a StatefulSet can set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "shardscaler/retention/deadline.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace shardscaler::retention;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto deadline = parseDeletionTimestamp(text)) {
    // A deadline read is written back as one that reads the same.
    auto again = parseDeletionTimestamp(deadline->toAnnotation());
    if (!again || *again != *deadline) std::abort();
  }
  if (auto t = parseRfc3339(text)) {
    auto again = parseRfc3339(formatRfc3339Utc(*t));
    if (!again || *again != *t) std::abort();
  }
  const std::string owned(text);
  (void)parseAnnotationTime(&owned);
  return 0;
}
