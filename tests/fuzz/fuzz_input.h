// What the libFuzzer targets share: one input split into the parts a target reads, so that the
// seed corpora stay readable text (parts are separated by a line "---"), and JSON read without
// exceptions. Test code only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscaler::fuzz {

// Exactly `count` parts of `text`: the pieces between lines "---", the last one taking the rest;
// missing parts are empty.
inline std::vector<std::string_view> parts(std::string_view text, std::size_t count) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < count) {
    const std::size_t at = text.find("\n---\n");
    if (at == std::string_view::npos) break;
    out.push_back(text.substr(0, at));
    text.remove_prefix(at + 5);
  }
  out.push_back(text);
  out.resize(count);
  return out;
}

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The JSON of `text`, or a discarded value when it is not JSON.
inline nlohmann::json json(std::string_view text) {
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// The lines of `text`, without their '\n'.
inline std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace shardscaler::fuzz
