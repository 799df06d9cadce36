// libFuzzer target: the text exposition a shard pod serves on /metrics, which shardscaler reads
// from pods anyone who can run one in the namespace controls. Whatever the parser accepts must
// read back the same once written out again.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "shardscaler/promql_client/exposition.h"

namespace {

using shardscaler::promql::ExposedSample;

std::string written(const std::vector<ExposedSample>& samples) {
  std::string out;
  for (const ExposedSample& s : samples) {
    out += s.name;
    out += '{';
    for (const auto& label : s.labels) {
      out += label.name + "=\"";
      for (char c : label.value) {
        if (c == '\n') {
          out += "\\n";
          continue;
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += "\",";
    }
    out += "} ";
    if (std::isnan(s.value)) {
      out += "NaN";
    } else if (std::isinf(s.value)) {
      out += s.value > 0 ? "+Inf" : "-Inf";
    } else {
      char buffer[64];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, s.value);
      if (ec != std::errc()) __builtin_trap();
      out.append(buffer, end);
    }
    if (s.timestamp_ms) out += " " + std::to_string(*s.timestamp_ms);
    out += '\n';
  }
  return out;
}

bool same(const ExposedSample& a, const ExposedSample& b) {
  const bool values = (std::isnan(a.value) && std::isnan(b.value)) || a.value == b.value;
  return a.name == b.name && a.labels == b.labels && values && a.timestamp_ms == b.timestamp_ms;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = shardscaler::fuzz::text(data, size);
  auto all = shardscaler::promql::parseExposition(text);
  // Filtering by name never changes what is accepted.
  auto some = shardscaler::promql::parseExposition(
      text, [](std::string_view name) { return name.size() % 2 == 0; });
  if (all.has_value() != some.has_value()) __builtin_trap();
  if (!all) return 0;
  auto again = shardscaler::promql::parseExposition(written(*all));
  if (!again || again->size() != all->size()) __builtin_trap();
  for (size_t i = 0; i < all->size(); ++i) {
    if (!same((*all)[i], (*again)[i])) __builtin_trap();
  }
  return 0;
}
