#include "log_text.h"

#include <algorithm>
#include <cstddef>

#include <nlohmann/json.hpp>

namespace shardscaler::base {

std::string jsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void appendTextField(std::string& out, const LogField& field) {
  out += ' ';
  out += field.key();
  out += '=';
  const std::string_view v = field.value();
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
