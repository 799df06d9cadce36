#include "shardscaler/planner/duration.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>

#include "shardscaler/base/expected.h"

namespace shardscaler::planner {
namespace {

struct Unit {
  std::string_view name;
  int position;  // units must appear with strictly increasing position
  uint64_t nanos;
};

constexpr uint64_t kMs = 1'000'000;
constexpr std::array<Unit, 7> kUnits{{
    {"y", 1, kMs * 1000 * 3600 * 24 * 365},
    {"w", 2, kMs * 1000 * 3600 * 24 * 7},
    {"d", 3, kMs * 1000 * 3600 * 24},
    {"h", 4, kMs * 1000 * 3600},
    {"m", 5, kMs * 1000 * 60},
    {"s", 6, kMs * 1000},
    {"ms", 7, kMs},
}};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Go's %q for the byte strings that reach an error message.
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out.append(buf);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

Expected<std::chrono::nanoseconds> parsePrometheusDuration(std::string_view text) {
  if (text == "0") return std::chrono::nanoseconds(0);
  if (text.empty()) return std::unexpected("empty duration string");

  const std::string invalid = "not a valid duration string: " + quote(text);
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  std::string_view rest = text;
  uint64_t total = 0;
  int last_position = 0;
  while (!rest.empty()) {
    if (!isDigit(rest.front())) return std::unexpected(invalid);
    size_t digits = 0;
    while (digits < rest.size() && isDigit(rest[digits])) ++digits;
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + digits, value);
    if (ec != std::errc() || end != rest.data() + digits) return std::unexpected(invalid);
    rest.remove_prefix(digits);

    size_t unit_length = 0;
    while (unit_length < rest.size() && !isDigit(rest[unit_length])) ++unit_length;
    if (unit_length == 0) return std::unexpected(invalid);
    std::string_view unit_name = rest.substr(0, unit_length);
    rest.remove_prefix(unit_length);

    const Unit* unit = nullptr;
    for (const auto& u : kUnits) {
      if (u.name == unit_name) unit = &u;
    }
    if (unit == nullptr) {
      return std::unexpected("unknown unit " + quote(unit_name) + " in duration " + quote(text));
    }
    if (unit->position <= last_position) return std::unexpected(invalid);
    last_position = unit->position;
    if (value > kLimit / unit->nanos) return std::unexpected("duration out of range");
    total += value * unit->nanos;  // both terms are <= 2^63, so this cannot wrap
    if (total > kLimit - 1) return std::unexpected("duration out of range");
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(total));
}

std::string formatPrometheusDuration(std::chrono::nanoseconds duration) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out.push_back('-');
    ms = -ms;
  }
  for (const auto& unit : kUnits) {
    const auto unit_ms = static_cast<int64_t>(unit.nanos / kMs);
    // Years and weeks only when exact: "90d" reads better than "12w6d".
    const bool exact_only = unit.name == "y" || unit.name == "w";
    if (exact_only && ms % unit_ms != 0) continue;
    if (int64_t v = ms / unit_ms; v > 0) {
      out.append(std::to_string(v)).append(unit.name);
      ms -= v * unit_ms;
    }
  }
  return out;
}

}  // namespace shardscaler::planner
