// Deletion deadlines of retained shards: computing them from `now` and a period, and the
// RFC3339 UTC annotation that stores them. Pure: `now` is always handed in, never read.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_meta/time.h"

namespace shardscaler::planner {

// RFC 3339 instants are k8s_meta's (the one codec): Timestamp, formatRfc3339, parseRfc3339.
using k8s::Timestamp;

// The instants shardscaler records in its own annotations (paused-at, detached-at): RFC3339 UTC
// with milliseconds. Reading gives nullopt for an absent or unreadable value.
std::string formatAnnotationTime(std::chrono::system_clock::time_point t);
std::optional<std::chrono::system_clock::time_point> parseAnnotationTime(const std::string* text);

class DeletionDeadline {
 public:
  static DeletionDeadline never() { return DeletionDeadline(std::nullopt); }
  static DeletionDeadline at(Timestamp t);

  bool isNever() const { return !at_.has_value(); }
  // Only meaningful when !isNever().
  Timestamp time() const { return at_.value_or(Timestamp{}); }
  // As a time_point: one outside what a time_point holds (1677..2262) is held at its nearest end,
  // so that arithmetic on it neither wraps nor moves it to the other side of now; never => max.
  std::chrono::system_clock::time_point timePoint() const;

  // Expired strictly after the deadline, as the operator's deadlineExpired; never => false.
  bool expiredAt(std::chrono::system_clock::time_point now) const;
  // Whole seconds from now until the first second at which expiredAt holds; nullopt when
  // never or already expired.
  std::optional<std::chrono::seconds> timeUntilExpiry(
      std::chrono::system_clock::time_point now) const;
  // The annotation value: RFC3339 UTC, "0001-01-01T00:00:00Z" for never.
  std::string toAnnotation() const;

  friend bool operator==(const DeletionDeadline&, const DeletionDeadline&) = default;

 private:
  explicit DeletionDeadline(std::optional<Timestamp> at) : at_(at) {}
  std::optional<Timestamp> at_;
};

inline constexpr std::string_view kNeverAnnotation = "0001-01-01T00:00:00Z";

// t + d, held at the ends of a time_point's range instead of wrapping around.
std::chrono::system_clock::time_point addSaturating(std::chrono::system_clock::time_point t,
                                                    std::chrono::nanoseconds d);

// now + period, truncated to whole seconds (what Go's RFC3339 formatting keeps). No period, or
// a period of 0, means never, as in the operator's gracePeriodForPrometheusStorage.
DeletionDeadline deadlineAfter(std::chrono::system_clock::time_point now,
                               std::optional<std::chrono::nanoseconds> period);

// Reads the annotation. The zero instant (0001-01-01T00:00:00Z, in any offset) means never.
Expected<DeletionDeadline> parseDeletionTimestamp(std::string_view text);

}  // namespace shardscaler::planner
