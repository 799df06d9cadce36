// Command-line flags of the controller benchmarks: "--name=N" and "--name=N,M,...".
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscaler::bench {

// N from "--<name>=N"; nullopt when `arg` is another flag. Throws on a value that is no number.
inline std::optional<int> intFlag(std::string_view arg, std::string_view name) {
  const std::string prefix = "--" + std::string(name) + "=";
  if (!arg.starts_with(prefix)) return std::nullopt;
  return std::stoi(std::string(arg.substr(prefix.size())));
}

// The numbers of "N,M,...". Throws on a value that is no number.
inline std::vector<int> intList(std::string_view text) {
  std::vector<int> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(std::stoi(std::string(text.substr(at, comma - at))));
    at = comma + 1;
  }
  return out;
}

}  // namespace shardscaler::bench
