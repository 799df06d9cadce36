#include "shardscaler/planner/deadline.h"

#include "shardscaler/base/expected.h"

namespace shardscaler::planner {
namespace {

using std::chrono::seconds;
using std::chrono::sys_days;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// The instant Go calls the zero time, which the annotation uses for "never".
Timestamp zeroTime() {
  return Timestamp{sys_days{std::chrono::year{1} / std::chrono::January / 1}, 0};
}

}  // namespace

DeletionDeadline DeletionDeadline::at(Timestamp t) {
  if (t == zeroTime()) return never();
  return DeletionDeadline(t);
}

bool DeletionDeadline::expiredAt(std::chrono::system_clock::time_point now) const {
  return at_.has_value() && Timestamp::fromTimePoint(now) > *at_;
}

std::chrono::system_clock::time_point DeletionDeadline::timePoint() const {
  using TimePoint = std::chrono::system_clock::time_point;
  if (!at_.has_value()) return TimePoint::max();
  if (auto t = at_->toTimePoint()) return *t;
  return at_->seconds < std::chrono::sys_seconds{} ? TimePoint::min() : TimePoint::max();
}

std::chrono::system_clock::time_point addSaturating(std::chrono::system_clock::time_point t,
                                                    std::chrono::nanoseconds d) {
  using TimePoint = std::chrono::system_clock::time_point;
  if (d > std::chrono::nanoseconds::zero() && t > TimePoint::max() - d) return TimePoint::max();
  if (d < std::chrono::nanoseconds::zero() && t < TimePoint::min() - d) return TimePoint::min();
  return t + d;
}

std::optional<std::chrono::seconds> DeletionDeadline::timeUntilExpiry(
    std::chrono::system_clock::time_point now) const {
  if (!at_.has_value() || expiredAt(now)) return std::nullopt;
  const Timestamp n = Timestamp::fromTimePoint(now);
  // Smallest whole number of seconds k with n + k > deadline.
  const int64_t whole = (at_->seconds - n.seconds).count();
  return seconds(n.nanos <= at_->nanos ? whole + 1 : whole);
}

std::string DeletionDeadline::toAnnotation() const {
  return at_.has_value() ? k8s::formatRfc3339(*at_) : std::string(kNeverAnnotation);
}

DeletionDeadline deadlineAfter(std::chrono::system_clock::time_point now,
                               std::optional<std::chrono::nanoseconds> period) {
  if (!period.has_value() || period->count() <= 0) return DeletionDeadline::never();
  // In seconds: now + up to 2^63-1 ns does not fit a nanosecond time_point.
  const Timestamp n = Timestamp::fromTimePoint(now);
  const int64_t p = period->count();
  const int64_t carry = (n.nanos + p % kNanosPerSecond) / kNanosPerSecond;
  return DeletionDeadline::at(Timestamp{n.seconds + seconds(p / kNanosPerSecond + carry), 0});
}

Expected<DeletionDeadline> parseDeletionTimestamp(std::string_view text) {
  auto t = k8s::parseRfc3339(text);
  if (!t) return std::unexpected(t.error());
  return DeletionDeadline::at(*t);
}

std::string formatAnnotationTime(std::chrono::system_clock::time_point t) {
  Timestamp ts = Timestamp::fromTimePoint(t);
  ts.nanos -= ts.nanos % 1'000'000;
  return k8s::formatRfc3339(ts);
}

std::optional<std::chrono::system_clock::time_point> parseAnnotationTime(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  auto ts = k8s::parseRfc3339(*text);
  if (!ts) return std::nullopt;
  return ts->toTimePoint();
}

}  // namespace shardscaler::planner
