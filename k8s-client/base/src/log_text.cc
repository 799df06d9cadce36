#include "log_text.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

namespace shardscaler::base {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

void appendEscapedAscii(std::string& out, char ch) {
  switch (ch) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (static_cast<unsigned char>(ch) < 0x20) {
    fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(ch));
  } else {
    out += ch;
  }
}

// The length of the sequence a lead byte starts and the range its second byte must fall in
// (Unicode's table of well-formed UTF-8: no overlong forms, surrogates or code points past
// U+10FFFF); length 0 for a byte that starts none.
struct Lead {
  size_t length = 0;
  uint8_t low = 0x80;
  uint8_t high = 0xBF;
};

Lead leadOf(uint8_t c) {
  if (c >= 0xC2 && c <= 0xDF) return {.length = 2};
  if (c == 0xE0) return {.length = 3, .low = 0xA0};
  if (c == 0xED) return {.length = 3, .high = 0x9F};
  if (c >= 0xE1 && c <= 0xEF) return {.length = 3};
  if (c == 0xF0) return {.length = 4, .low = 0x90};
  if (c >= 0xF1 && c <= 0xF3) return {.length = 4};
  if (c == 0xF4) return {.length = 4, .high = 0x8F};
  return {};
}

}  // namespace

std::string jsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      appendEscapedAscii(out, s[i]);
      ++i;
      continue;
    }
    const Lead lead = leadOf(c);
    if (lead.length == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    size_t n = 1;  // bytes of the sequence that are well formed so far
    for (; n < lead.length && i + n < s.size(); ++n) {
      const auto b = static_cast<uint8_t>(s[i + n]);
      const uint8_t low = n == 1 ? lead.low : 0x80;
      const uint8_t high = n == 1 ? lead.high : 0xBF;
      if (b < low || b > high) break;
    }
    // A broken sequence becomes one U+FFFD; the byte that broke it starts the next one.
    out += n == lead.length ? s.substr(i, n) : kReplacement;
    i += n;
  }
  out += '"';
  return out;
}

void appendTextValue(std::string& out, std::string_view v) {
  const bool bare = !v.empty() && std::ranges::none_of(v, [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c <= ' ' || c == '=' || c == '"' || c == '\\' || c >= 0x7F;
  });
  if (bare) {
    out += v;
  } else {
    out += jsonString(v);
  }
}

void appendTextMessage(std::string& out, std::string_view msg) {
  const std::string quoted = jsonString(msg);
  const std::string_view body(quoted.data() + 1, quoted.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size() && (body[i + 1] == '"' || body[i + 1] == '\\')) {
      ++i;
    }
    out += body[i];
  }
}

}  // namespace shardscaler::base
