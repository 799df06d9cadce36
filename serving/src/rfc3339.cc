#include "rfc3339.h"

#include <cstdio>
#include <ctime>

namespace shardscaler::serving::detail {

std::string formatRfc3339(SystemTime time) {
  const std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(time));
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  const size_t length = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, length);
}

std::optional<SystemTime> parseRfc3339(std::string_view text) {
  const std::string copy(text);
  std::tm tm{};
  const char* rest = strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.') {
    ++rest;
    if (*rest < '0' || *rest > '9') return std::nullopt;
    while (*rest >= '0' && *rest <= '9') ++rest;
  }
  if (rest[0] != 'Z' || rest[1] != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace shardscaler::serving::detail
