// libFuzzer target: AdmissionReview bodies as the shard guard's HTTPS endpoint receives them.
// The API server sends them, but the port is reachable by anything on the pod network.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardscaler/guard/admission_review.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)shardscaler::guard::decodeAdmissionReview(text);
  return 0;
}
