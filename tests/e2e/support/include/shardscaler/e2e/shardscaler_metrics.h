// What a running shardscaler says on its /metrics, for tests and benchmarks: one GET, read by
// test_kit::sumSamples. Nothing here parses the exposition by hand.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "shardscaler/e2e/shardscaler_process.h"

namespace shardscaler::e2e {

// From one GET of `process`'s /metrics: the sum of the samples named `name` whose labels include
// the `label="value"` pairs of `labels` (`verb="list"`; every sample of `name` when empty), or
// nullopt when none matches (an absent gauge is not a 0). Throws std::runtime_error when /metrics
// does not answer 200.
std::optional<double> metricSum(const ShardscalerProcess& process, std::string_view name,
                                std::string_view labels = {});

// Likewise, one sum per combination of the values of the labels `by` (test_kit::sumSamplesBy):
// metricSumsBy(p, "shardscaler_kube_requests_total", {"verb", "resource"}) is shardscaler's
// requests so far, keyed "patch statefulsets.apps/v1".
std::map<std::string, double> metricSumsBy(const ShardscalerProcess& process, std::string_view name,
                                           std::span<const std::string_view> by,
                                           std::string_view labels = {});

}  // namespace shardscaler::e2e
