// Deletion deadlines of retained shards: computing them from `now` and a period, and the
// RFC3339 UTC annotation that stores them. Pure: `now` is always handed in, never read.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace shardscaler::planner {

// An instant with the range of RFC3339 (years 0000..9999), which a nanosecond
// system_clock::time_point (1677..2262) does not have.
struct Timestamp {
  std::chrono::sys_seconds seconds{};
  int32_t nanos = 0;  // 0 .. 999'999'999

  static Timestamp fromTimePoint(std::chrono::system_clock::time_point t);
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

// "2026-11-25T10:00:00Z"; fractional seconds are written only when non-zero.
std::string formatRfc3339Utc(Timestamp t);
// RFC3339 as Go's time.Parse(time.RFC3339) reads it:
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm).
std::expected<Timestamp, std::string> parseRfc3339(std::string_view text);

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

// now + period, truncated to whole seconds (what Go's RFC3339 formatting keeps). No period, or
// a period of 0, means never, as in the operator's gracePeriodForPrometheusStorage.
DeletionDeadline deadlineAfter(std::chrono::system_clock::time_point now,
                               std::optional<std::chrono::nanoseconds> period);

// Reads the annotation. The zero instant (0001-01-01T00:00:00Z, in any offset) means never.
std::expected<DeletionDeadline, std::string> parseDeletionTimestamp(std::string_view text);

}  // namespace shardscaler::planner
