// libFuzzer target: Prometheus HTTP API responses, the bodies of query answers from servers that
// shardscaler does not control.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardscaler/promql_client/response_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)shardscaler::promql::decodeApiResponse(text);
  (void)shardscaler::promql::parseSampleValue(text);
  return 0;
}
