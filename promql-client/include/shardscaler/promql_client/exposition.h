// The Prometheus text exposition format, version 0.0.4 (what a Prometheus serves on its own
// /metrics), read strictly from a body a pod sent. It never does I/O and never throws.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/promql_client/labels.h"

namespace shardscaler::promql {

struct ExposedSample {
  std::string name{};
  Labels labels{};  // in the order written; never two of one name
  double value = 0;
  std::optional<int64_t> timestamp_ms{};

  friend bool operator==(const ExposedSample&, const ExposedSample&) = default;
};

// Which samples to keep, by metric name (every one when empty).
using KeepSample = std::function<bool(std::string_view name)>;

// The samples of `body` that `keep` accepts, in the order written. Every line is checked, kept or
// not, so that a body that is not the format is refused rather than half read: the error names
// the line and what is wrong with it ("line 12: a label value must be quoted"), and never quotes
// the body. The grammar: lines end with '\n' (the last may not); a line is empty, a comment
// ("# HELP <name> <text>", "# TYPE <name> counter|gauge|histogram|summary|untyped", at most one of
// each per name, or any other text after '#'), or a sample:
//   name [ '{' label '=' '"' value '"' { ',' label '=' '"' value '"' } [ ',' ] '}' ] value [ ts ]
// with spaces or tabs between the parts, a value as Go writes a float (NaN, +Inf and -Inf too),
// label values escaped with \\, \" and \n only, and a timestamp in integer milliseconds.
Expected<std::vector<ExposedSample>> parseExposition(std::string_view body,
                                                     const KeepSample& keep = {});

}  // namespace shardscaler::promql
