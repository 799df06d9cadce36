// What a running shardscaler says on its /metrics, for tests and benchmarks: one GET, read by
// test_kit::sumSamples. Nothing here parses the exposition by hand.
#pragma once

#include <optional>
#include <string_view>

#include "shardscaler/e2e/shardscaler_process.h"

namespace shardscaler::e2e {

// From one GET of `process`'s /metrics: the sum of the samples named `name` whose labels include
// the `label="value"` pairs of `labels` (`verb="list"`; every sample of `name` when empty), or
// nullopt when none matches (an absent gauge is not a 0). Throws std::runtime_error when /metrics
// does not answer 200.
std::optional<double> metricSum(const ShardscalerProcess& process, std::string_view name,
                                std::string_view labels = {});

}  // namespace shardscaler::e2e
