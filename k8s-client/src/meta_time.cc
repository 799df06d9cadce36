#include "shardscaler/k8s_client/meta_time.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>

namespace shardscaler::k8s {

namespace {

using std::chrono::days;
using std::chrono::microseconds;
using std::chrono::sys_days;

bool digits(std::string_view text, size_t pos, size_t count, int& out) {
  if (pos + count > text.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    out = out * 10 + (text[i] - '0');
  }
  return true;
}

std::unexpected<Error> badTime(std::string_view text) {
  return makeError(ErrorKind::Decode, "not an RFC 3339 time: \"" + std::string(text) + "\"");
}

// Whole seconds for metav1.Time, six digits of fraction for metav1.MicroTime.
std::string formatUtc(Clock::SystemTime t, bool with_micros) {
  auto micros = std::chrono::floor<microseconds>(t);
  auto day = std::chrono::floor<days>(micros);
  std::chrono::year_month_day ymd{day};
  std::chrono::hh_mm_ss hms{micros - day};
  char buffer[40];
  int length = std::snprintf(
      buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
      static_cast<int>(hms.seconds().count()));
  if (with_micros) {
    length += std::snprintf(buffer + length, sizeof buffer - static_cast<size_t>(length), ".%06lld",
                            static_cast<long long>(hms.subseconds().count()));
  }
  return std::string(buffer, static_cast<size_t>(length)) + "Z";
}

}  // namespace

std::string formatTime(Clock::SystemTime t) { return formatUtc(t, false); }

std::string formatMicroTime(Clock::SystemTime t) { return formatUtc(t, true); }

Result<Clock::SystemTime> parseMicroTime(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(text, 0, 4, year) || text.size() < 20 || text[4] != '-' ||
      !digits(text, 5, 2, month) || text[7] != '-' || !digits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't') || !digits(text, 11, 2, hour) || text[13] != ':' ||
      !digits(text, 14, 2, minute) || text[16] != ':' || !digits(text, 17, 2, second)) {
    return badTime(text);
  }
  size_t pos = 19;
  long long fraction_us = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    long long scale = 100000;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      fraction_us += (text[pos] - '0') * scale;  // digits beyond microseconds are dropped
      scale /= 10;
      ++pos;
    }
    if (pos == start) return badTime(text);
  }
  std::chrono::minutes offset{0};
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !digits(text, pos + 4, 2, om)) {
      return badTime(text);
    }
    offset = std::chrono::hours(oh) + std::chrono::minutes(om);
    if (text[pos] == '-') offset = -offset;
    pos += 6;
  } else {
    return badTime(text);
  }
  if (pos != text.size()) return badTime(text);
  std::chrono::year_month_day ymd{std::chrono::year(year), std::chrono::month(month),
                                  std::chrono::day(day)};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 60) return badTime(text);
  auto t = sys_days(ymd) + std::chrono::hours(hour) + std::chrono::minutes(minute) +
           std::chrono::seconds(second) + microseconds(fraction_us) - offset;
  return std::chrono::time_point_cast<Clock::SystemTime::duration>(t);
}

}  // namespace shardscaler::k8s
