#include "shardscaler/planner/deadline.h"

#include <cstdio>

namespace shardscaler::planner {
namespace {

using std::chrono::days;
using std::chrono::seconds;
using std::chrono::sys_days;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// The instant Go calls the zero time, which the annotation uses for "never".
Timestamp zeroTime() {
  return Timestamp{sys_days{std::chrono::year{1} / std::chrono::January / 1}, 0};
}

bool digitsAt(std::string_view s, size_t pos, size_t count, int& value) {
  if (pos + count > s.size()) return false;
  value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

Timestamp Timestamp::fromTimePoint(std::chrono::system_clock::time_point t) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(t - secs).count();
  return Timestamp{std::chrono::sys_seconds{secs.time_since_epoch()}, static_cast<int32_t>(nanos)};
}

std::string formatRfc3339Utc(Timestamp t) {
  const auto day = std::chrono::floor<days>(t.seconds);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss<seconds> hms{t.seconds - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02lld", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()));
  std::string out = buf;
  if (t.nanos != 0) {
    std::snprintf(buf, sizeof buf, ".%09d", t.nanos);
    std::string fraction = buf;
    while (fraction.back() == '0') fraction.pop_back();
    out += fraction;
  }
  out += 'Z';
  return out;
}

std::expected<Timestamp, std::string> parseRfc3339(std::string_view text) {
  const auto bad = [&](std::string_view why) -> std::unexpected<std::string> {
    // Appended piecewise: g++ 12 -O3 warns falsely (-Wrestrict, PR105329) on "lit" + string.
    std::string message(1, '"');
    message.append(text).append("\" is not an RFC3339 time: ").append(why);
    return std::unexpected(std::move(message));
  };

  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digitsAt(text, 0, 4, year) || text.size() < 20 || text[4] != '-' ||
      !digitsAt(text, 5, 2, month) || text[7] != '-' || !digitsAt(text, 8, 2, day) ||
      text[10] != 'T' || !digitsAt(text, 11, 2, hour) || text[13] != ':' ||
      !digitsAt(text, 14, 2, minute) || text[16] != ':' || !digitsAt(text, 17, 2, second)) {
    return bad("expected YYYY-MM-DDTHH:MM:SS");
  }
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return bad("no such date");
  if (hour > 23 || minute > 59 || second > 59) return bad("time of day out of range");

  size_t pos = 19;
  int64_t nanos = 0;
  if (text[pos] == '.' || text[pos] == ',') {
    ++pos;
    size_t digits = 0;
    int64_t scale = kNanosPerSecond;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 9) {
        scale /= 10;
        nanos += (text[pos] - '0') * scale;
      }
      ++digits;
      ++pos;
    }
    if (digits == 0) return bad("empty fraction of a second");
  }

  int64_t offset_seconds = 0;
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!digitsAt(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !digitsAt(text, pos + 4, 2, om)) {
      return bad("expected a zone offset +hh:mm");
    }
    if (oh > 23 || om > 59) return bad("zone offset out of range");
    offset_seconds = (int64_t{oh} * 3600 + int64_t{om} * 60) * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad("expected Z or a zone offset");
  }
  if (pos != text.size()) return bad("extra text after the time");

  const auto local =
      sys_days{ymd} + std::chrono::hours(hour) + std::chrono::minutes(minute) + seconds(second);
  return Timestamp{std::chrono::sys_seconds{local - seconds(offset_seconds)},
                   static_cast<int32_t>(nanos)};
}

DeletionDeadline DeletionDeadline::at(Timestamp t) {
  if (t == zeroTime()) return never();
  return DeletionDeadline(t);
}

bool DeletionDeadline::expiredAt(std::chrono::system_clock::time_point now) const {
  return at_.has_value() && Timestamp::fromTimePoint(now) > *at_;
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
  return at_.has_value() ? formatRfc3339Utc(*at_) : std::string(kNeverAnnotation);
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

std::expected<DeletionDeadline, std::string> parseDeletionTimestamp(std::string_view text) {
  auto t = parseRfc3339(text);
  if (!t) return std::unexpected(t.error());
  return DeletionDeadline::at(*t);
}

std::string formatAnnotationTime(std::chrono::system_clock::time_point t) {
  Timestamp ts = Timestamp::fromTimePoint(t);
  ts.nanos -= ts.nanos % 1'000'000;
  return formatRfc3339Utc(ts);
}

std::optional<std::chrono::system_clock::time_point> parseAnnotationTime(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  auto ts = parseRfc3339(*text);
  if (!ts) return std::nullopt;
  // A nanosecond time_point spans 1677..2262; an instant outside (a hand-written "0001-01-01",
  // found by the fuzz target) is as unreadable as a typo, not an overflow.
  using std::chrono::floor;
  using std::chrono::seconds;
  using TimePoint = std::chrono::system_clock::time_point;
  const auto earliest = std::chrono::ceil<seconds>(TimePoint::min()) + seconds(1);
  const auto latest = floor<seconds>(TimePoint::max()) - seconds(1);
  if (ts->seconds < earliest || ts->seconds > latest) return std::nullopt;
  return std::chrono::system_clock::time_point(ts->seconds) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::nanoseconds(ts->nanos));
}

}  // namespace shardscaler::planner
