#include "shardscaler/k8s_client/meta_time.h"

#include <string>

namespace shardscaler::k8s {

Result<Clock::SystemTime> parseMicroTime(std::string_view text) {
  auto parsed = parseRfc3339(text);
  if (!parsed) return makeError(ErrorKind::Decode, parsed.error());
  auto t = parsed->toTimePoint();
  if (!t) {
    return makeError(ErrorKind::Decode,
                     "\"" + std::string(text) + "\" is outside the years 1678..2261");
  }
  return *t;
}

}  // namespace shardscaler::k8s
