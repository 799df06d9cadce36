// Go's time.Duration syntax for the duration flags and config keys: parsing and the shortest
// spelling, as time.ParseDuration and Duration.String do.
#include <array>
#include <cstdint>
#include <limits>

#include "option_spec.h"
#include "shardscaler/base/expected.h"

namespace shardscaler::app {

using detail::fail;
using detail::inQuotes;

Expected<std::chrono::nanoseconds> parseGoDuration(std::string_view text) {
  const std::string syntax = " (use Go syntax such as 10s, 1m30s or 250ms)";
  const auto bad = [&](const std::string& why) {
    return fail(inQuotes(text) + " is not a duration" + (why.empty() ? "" : ": " + why) + syntax);
  };
  std::string_view s = text;
  if (s.starts_with("-")) return fail(inQuotes(text) + " is negative");
  if (s.starts_with("+")) s.remove_prefix(1);
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return bad("");
  struct Unit {
    std::string_view name;
    std::uint64_t ns;
  };
  static constexpr std::array<Unit, 8> kUnits = {{{"ns", 1},
                                                  {"us", 1'000},
                                                  {"\xC2\xB5s", 1'000},  // U+00B5
                                                  {"\xCE\xBCs", 1'000},  // U+03BC
                                                  {"ms", 1'000'000},
                                                  {"s", 1'000'000'000},
                                                  {"m", 60'000'000'000},
                                                  {"h", 3'600'000'000'000}}};
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::uint64_t total = 0;
  while (!s.empty()) {
    std::uint64_t whole = 0;
    size_t i = 0;
    bool overflow = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > (kMax - 9) / 10) overflow = true;
      whole = whole * 10 + static_cast<std::uint64_t>(s[i] - '0');
      ++i;
    }
    const size_t whole_digits = i;
    std::uint64_t frac = 0;
    std::uint64_t frac_scale = 1;
    size_t frac_digits = 0;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        // Digits beyond nanosecond precision cannot change the result; drop them.
        if (frac_scale < 1'000'000'000'000'000ULL) {
          frac = frac * 10 + static_cast<std::uint64_t>(s[i] - '0');
          frac_scale *= 10;
        }
        ++i, ++frac_digits;
      }
    }
    if (whole_digits == 0 && frac_digits == 0) return bad("");
    const size_t unit_start = i;
    while (i < s.size() && s[i] != '.' && (s[i] < '0' || s[i] > '9')) ++i;
    const std::string_view unit_name = s.substr(unit_start, i - unit_start);
    if (unit_name.empty()) return bad("missing unit");
    const auto unit =
        std::ranges::find_if(kUnits, [&](const Unit& u) { return u.name == unit_name; });
    if (unit == kUnits.end()) {
      return bad("unknown unit " + inQuotes(unit_name) + ", use ns, us, ms, s, m or h");
    }
    if (overflow || whole > kMax / unit->ns) return fail(inQuotes(text) + " is too large");
    std::uint64_t value = whole * unit->ns;
    // frac < frac_scale <= 1e18 and unit <= 3.6e12: the product may overflow, so scale first.
    const long double part =
        static_cast<long double>(frac) * static_cast<long double>(unit->ns) / frac_scale;
    value += static_cast<std::uint64_t>(part);
    if (value > kMax || total > kMax - value) return fail(inQuotes(text) + " is too large");
    total += value;
    s.remove_prefix(i);
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

std::string formatGoDuration(std::chrono::nanoseconds d) {
  // time.Duration.String.
  std::int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  std::uint64_t u =
      ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  auto fraction = [](std::uint64_t v, std::uint64_t scale) {
    // v / scale with trailing zeros of the fraction dropped.
    std::string out = std::to_string(v / scale);
    std::uint64_t rest = v % scale;
    if (rest == 0) return out;
    std::string digits;
    for (std::uint64_t s = scale / 10; s > 0; s /= 10) {
      digits += static_cast<char>('0' + (rest / s) % 10);
    }
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    return out + "." + digits;
  };
  if (u < 1'000) return sign + std::to_string(u) + "ns";
  if (u < 1'000'000) return sign + fraction(u, 1'000) + "\xC2\xB5s";
  if (u < 1'000'000'000) return sign + fraction(u, 1'000'000) + "ms";
  const std::uint64_t hours = u / 3'600'000'000'000;
  u %= 3'600'000'000'000;
  const std::uint64_t minutes = u / 60'000'000'000;
  u %= 60'000'000'000;
  std::string out = sign;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  return out + fraction(u, 1'000'000'000) + "s";
}

}  // namespace shardscaler::app
