// A series' label set as the API returns it (the "metric" object), kept in the server's order.
// A plain value type: it never validates label names or talks to a server.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscaler::promql {

struct Label {
  std::string name{};
  std::string value{};

  friend bool operator==(const Label&, const Label&) = default;
};

// A flat vector rather than a map: decoding 100k series is dominated by allocations, and
// series carry few labels, so a linear lookup is as fast as a tree.
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<Label> labels) : labels_(labels) {}

  // The value of `name`, or "" when the series has no such label (as in PromQL).
  std::string_view get(std::string_view name) const;
  bool has(std::string_view name) const;
  void add(std::string name, std::string value) {
    labels_.push_back({std::move(name), std::move(value)});
  }
  void reserve(size_t n) { labels_.reserve(n); }

  bool empty() const { return labels_.empty(); }
  size_t size() const { return labels_.size(); }
  auto begin() const { return labels_.begin(); }
  auto end() const { return labels_.end(); }

  // {__name__="up", job="x"} sorted by name, for messages and test output.
  std::string toString() const;

  // Equal when they hold the same labels, whatever the order.
  friend bool operator==(const Labels& a, const Labels& b);

 private:
  std::vector<Label> labels_;
};

}  // namespace shardscaler::promql
