#include "shardscaler/k8s_meta/time.h"

#include <cstdio>

#include "shardscaler/base/expected.h"

namespace shardscaler::k8s {
namespace {

using std::chrono::days;
using std::chrono::seconds;
using std::chrono::sys_days;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

bool digitsAt(std::string_view s, size_t pos, size_t count, int& value) {
  if (pos + count > s.size()) return false;
  value = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
  }
  return true;
}

// The date and time of day of `t` in UTC, "2006-01-02T15:04:05", without fraction or zone.
std::string formatSeconds(std::chrono::sys_seconds t) {
  const auto day = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss<seconds> hms{t - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02lld", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()));
  return buf;
}

}  // namespace

Timestamp Timestamp::fromTimePoint(std::chrono::system_clock::time_point t) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(t - secs).count();
  return Timestamp{std::chrono::sys_seconds{secs.time_since_epoch()}, static_cast<int32_t>(nanos)};
}

std::optional<std::chrono::system_clock::time_point> Timestamp::toTimePoint() const {
  // A nanosecond time_point spans 1677..2262; an instant outside (a hand-written "0001-01-01")
  // is as unreadable as a typo, not an overflow.
  using TimePoint = std::chrono::system_clock::time_point;
  using Seconds = std::chrono::seconds;  // the member `seconds` hides the alias here
  const auto earliest = std::chrono::ceil<Seconds>(TimePoint::min()) + Seconds(1);
  const auto latest = std::chrono::floor<Seconds>(TimePoint::max()) - Seconds(1);
  if (seconds < earliest || seconds > latest) return std::nullopt;
  return TimePoint(seconds) +
         std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(nanos));
}

std::string formatRfc3339(Timestamp t) {
  std::string out = formatSeconds(t.seconds);
  if (t.nanos != 0) {
    char buf[16];
    std::snprintf(buf, sizeof buf, ".%09d", t.nanos);
    std::string fraction = buf;
    while (fraction.back() == '0') fraction.pop_back();
    out += fraction;
  }
  out += 'Z';
  return out;
}

std::string formatTime(std::chrono::system_clock::time_point t) {
  return formatSeconds(std::chrono::floor<seconds>(t)) + 'Z';
}

std::string formatMicroTime(std::chrono::system_clock::time_point t) {
  const auto whole = std::chrono::floor<seconds>(t);
  const auto micros = std::chrono::floor<std::chrono::microseconds>(t - whole).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, ".%06lldZ", static_cast<long long>(micros));
  return formatSeconds(whole) + buf;
}

Expected<Timestamp> parseRfc3339(std::string_view text) {
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

}  // namespace shardscaler::k8s
