#include "shardscaler/promql_client/labels.h"

#include <algorithm>

namespace shardscaler::promql {

std::string_view Labels::get(std::string_view name) const {
  for (const Label& label : labels_) {
    if (label.name == name) return label.value;
  }
  return {};
}

bool Labels::has(std::string_view name) const {
  return std::any_of(labels_.begin(), labels_.end(),
                     [name](const Label& label) { return label.name == name; });
}

namespace {
std::vector<const Label*> sortedByName(const std::vector<Label>& labels) {
  std::vector<const Label*> sorted;
  sorted.reserve(labels.size());
  for (const Label& label : labels) sorted.push_back(&label);
  std::sort(sorted.begin(), sorted.end(),
            [](const Label* a, const Label* b) { return a->name < b->name; });
  return sorted;
}
}  // namespace

std::string Labels::toString() const {
  std::string out = "{";
  bool first = true;
  for (const Label* label : sortedByName(labels_)) {
    if (!first) out += ", ";
    first = false;
    out += label->name;
    out += "=\"";
    for (char c : label->value) {
      if (c == '"' || c == '\\') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

bool operator==(const Labels& a, const Labels& b) {
  if (a.size() != b.size()) return false;
  auto sa = sortedByName(a.labels_);
  auto sb = sortedByName(b.labels_);
  return std::equal(sa.begin(), sa.end(), sb.begin(),
                    [](const Label* x, const Label* y) { return *x == *y; });
}

}  // namespace shardscaler::promql
