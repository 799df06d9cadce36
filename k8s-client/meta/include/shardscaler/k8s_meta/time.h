// metav1.Time and metav1.MicroTime: RFC 3339 as the API server and Go's time package write and read
// it. The one RFC 3339 codec of the project (deadlines, annotations, conditions, Leases, Events).
// Pure conversions: nothing here reads a clock.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include "shardscaler/base/expected.h"

namespace shardscaler::k8s {

// An instant with the range of RFC 3339 (years 0000..9999), which a nanosecond
// system_clock::time_point (1677..2262) does not have.
struct Timestamp {
  std::chrono::sys_seconds seconds{};
  int32_t nanos = 0;  // 0 .. 999'999'999

  static Timestamp fromTimePoint(std::chrono::system_clock::time_point t);
  // nullopt for an instant a system_clock::time_point cannot hold.
  std::optional<std::chrono::system_clock::time_point> toTimePoint() const;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

// "2026-11-25T10:00:00Z"; fractional seconds are written only when non-zero, without trailing
// zeros (Go's time.RFC3339Nano).
std::string formatRfc3339(Timestamp t);
// RFC 3339 as Go's time.Parse(time.RFC3339) reads it:
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm). The error names the text and what is wrong.
Expected<Timestamp> parseRfc3339(std::string_view text);

// metav1.Time: RFC 3339 in UTC to the whole second, "2006-01-02T15:04:05Z" (conditions,
// annotations, certificate times in messages).
std::string formatTime(std::chrono::system_clock::time_point t);
// metav1.MicroTime: RFC 3339 in UTC with six digits of fraction, "2006-01-02T15:04:05.000000Z".
std::string formatMicroTime(std::chrono::system_clock::time_point t);

}  // namespace shardscaler::k8s
