#include "shardscaler/test_kit/metric_samples.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardscaler::test_kit {
namespace {

// A label as the text has it: the value still escaped (\\, \", \n), which is how `labels` is
// written too, so the two compare as they stand.
struct Label {
  std::string_view name;
  std::string_view value;
  bool operator==(const Label&) const = default;
};

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// Reads `name="value",...` from the front of `in`, up to a closing '}' (consumed) when `braced`,
// else to the end. nullopt when it is not a label list.
std::optional<std::vector<Label>> readLabels(std::string_view& in, bool braced) {
  std::vector<Label> labels;
  while (true) {
    in = in.substr(std::min(in.find_first_not_of(" \t"), in.size()));
    if (braced && in.starts_with('}')) {
      in.remove_prefix(1);
      return labels;
    }
    if (!braced && in.empty()) return labels;
    const auto eq = in.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view name = trimmed(in.substr(0, eq));
    in.remove_prefix(eq + 1);
    in = in.substr(std::min(in.find_first_not_of(" \t"), in.size()));
    if (name.empty() || !in.starts_with('"')) return std::nullopt;
    size_t end = 1;
    while (end < in.size() && in[end] != '"') end += in[end] == '\\' ? 2 : 1;
    if (end >= in.size()) return std::nullopt;
    labels.push_back({name, in.substr(1, end - 1)});
    in.remove_prefix(end + 1);
    in = in.substr(std::min(in.find_first_not_of(" \t"), in.size()));
    if (in.starts_with(',')) {
      in.remove_prefix(1);
    } else if (!(braced ? in.starts_with('}') : in.empty())) {
      return std::nullopt;
    }
  }
}

// A sample's value: a float, +Inf, -Inf or NaN (std::from_chars takes no leading '+').
std::optional<double> readValue(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Calls each(labels, value) for every sample named `name` whose labels include every one of
// `matchers` (a label list as a series writes it).
template <typename Each>
void forEachSample(std::string_view exposition, std::string_view name, std::string_view matchers,
                   Each each) {
  std::string_view wanted_text = matchers;
  const auto wanted = readLabels(wanted_text, false);
  if (!wanted) throw std::invalid_argument("not a label list: " + std::string(matchers));

  while (!exposition.empty()) {
    const auto eol = std::min(exposition.find('\n'), exposition.size());
    const std::string_view line = trimmed(exposition.substr(0, eol));
    exposition.remove_prefix(std::min(eol + 1, exposition.size()));
    if (line.empty() || line.starts_with('#')) continue;

    const auto name_end = std::min(line.find_first_of("{ \t"), line.size());
    if (line.substr(0, name_end) != name) continue;
    const auto malformed = [&] {
      return std::invalid_argument("malformed sample: " + std::string(line));
    };
    std::string_view rest = line.substr(name_end);
    std::vector<Label> sample_labels;
    if (rest.starts_with('{')) {
      rest.remove_prefix(1);
      auto read = readLabels(rest, true);
      if (!read) throw malformed();
      sample_labels = std::move(*read);
    }
    // The value, then an optional timestamp.
    rest = trimmed(rest);
    const auto value = readValue(rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size())));
    if (!value) throw malformed();
    if (!std::ranges::all_of(*wanted, [&](const Label& l) {
          return std::ranges::find(sample_labels, l) != sample_labels.end();
        })) {
      continue;
    }
    each(sample_labels, *value);
  }
}

}  // namespace

std::optional<double> sumSamples(std::string_view exposition, std::string_view name,
                                 std::string_view labels) {
  std::optional<double> sum;
  forEachSample(exposition, name, labels,
                [&](const std::vector<Label>&, double value) { sum = sum.value_or(0) + value; });
  return sum;
}

std::map<std::string, double> sumSamplesBy(std::string_view exposition, std::string_view name,
                                           std::span<const std::string_view> by,
                                           std::string_view labels) {
  std::map<std::string, double> sums;
  forEachSample(exposition, name, labels, [&](const std::vector<Label>& sample, double value) {
    std::string key;
    for (std::string_view label : by) {
      auto it = std::ranges::find(sample, label, &Label::name);
      if (!key.empty()) key += ' ';
      key += it == sample.end() ? std::string_view() : it->value;
    }
    sums[key] += value;
  });
  return sums;
}

}  // namespace shardscaler::test_kit
