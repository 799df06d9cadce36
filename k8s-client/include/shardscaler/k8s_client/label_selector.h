// Kubernetes label selectors, read from their string form (labels.Parse: `shardset=main`,
// `tier in (a,b)`) or from a metav1.LabelSelector object, and matched against labels. Pure; must
// never match what the API server's reading of the same selector would not.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "shardscaler/base/expected.h"

namespace shardscaler::k8s {

// The operators of labels.Parse and of matchExpressions; the numeric `gt`/`lt` of labels.Parse are
// refused (no label shardscaler reads is a number).
enum class SelectorOperator { Equals, NotEquals, In, NotIn, Exists, DoesNotExist };

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::Exists;
  std::vector<std::string> values;  // one for Equals/NotEquals; the set of In/NotIn

  friend bool operator==(const SelectorRequirement&, const SelectorRequirement&) = default;
};

using Labels = std::map<std::string, std::string, std::less<>>;

class LabelSelector {
 public:
  // "" selects everything. Keys and values are checked as the API server checks them. The error
  // names the position and what was expected, e.g.
  // `label selector "a in (b": missing ')' after the values of "a"`.
  static Expected<LabelSelector> parse(std::string_view text);
  // A metav1.LabelSelector (matchLabels, matchExpressions) as the API server stored it; null or
  // {} selects everything. Only its shape is checked (the API server validated keys and values
  // when it stored it); the error names the field that is not what metav1 allows.
  static Expected<LabelSelector> fromObject(const nlohmann::json& selector);

  bool matches(const Labels& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<SelectorRequirement>& requirements() const { return requirements_; }
  // The one value `key` must have when the selector pins it (`key=v`, `key==v`, `key in (v)`),
  // so that a reader can fetch that object by name instead of listing.
  std::optional<std::string> pinnedValue(std::string_view key) const;
  // What parse() was given; "" for a selector read by fromObject().
  const std::string& text() const { return text_; }

 private:
  std::vector<SelectorRequirement> requirements_;
  std::string text_;
};

// An object's `metadata.labels` (or any JSON object of labels) as Labels. Entries whose value is
// not a string are left out: they are not labels the API server would have stored.
Labels labelsOf(const nlohmann::json& labels);

}  // namespace shardscaler::k8s
