// Kubernetes label selectors in their string form (`shardset=main`, `shardset in (a,b)`), parsed
// and matched against labels. Pure; must never match what a stricter reading would not.
#pragma once

#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscaler::metrics_api {

// The operators of apimachinery's labels.Parse that an external metric selector uses; the
// numeric `gt`/`lt` are refused (no shardscaler label is a number).
enum class SelectorOperator { Equals, NotEquals, In, NotIn, Exists, DoesNotExist };

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::Exists;
  std::vector<std::string> values;  // one for Equals/NotEquals, one or more for In/NotIn

  friend bool operator==(const SelectorRequirement&, const SelectorRequirement&) = default;
};

using Labels = std::map<std::string, std::string, std::less<>>;

class LabelSelector {
 public:
  // "" selects everything. The error names the position and what was expected, e.g.
  // `label selector "a in (b": missing ')' after the values of "a"`.
  static std::expected<LabelSelector, std::string> parse(std::string_view text);

  bool matches(const Labels& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<SelectorRequirement>& requirements() const { return requirements_; }
  // The one value `key` must have when the selector pins it (`key=v`, `key==v`, `key in (v)`),
  // so that a reader can fetch that object by name instead of listing.
  std::optional<std::string> pinnedValue(std::string_view key) const;
  const std::string& text() const { return text_; }

 private:
  std::vector<SelectorRequirement> requirements_;
  std::string text_;
};

}  // namespace shardscaler::metrics_api
