// The tests' one reader of the Prometheus text exposition (format 0.0.4, what a /metrics endpoint
// serves): the sum of a metric's samples. It reads a body it is given and never fetches one.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace shardscaler::test_kit {

// The sum of the samples named `name` (a counter's or a gauge's family; a histogram's
// <family>_count or _sum) whose labels include every `label="value"` pair of `labels`, written
// as in a series (`verb="list"`, `operation="DELETE",result="denied"`); every sample of `name`
// when `labels` is empty. nullopt when no sample matches, so that an absent series is not a 0.
// Throws std::invalid_argument on a malformed `labels` or a malformed sample of `name`.
std::optional<double> sumSamples(std::string_view exposition, std::string_view name,
                                 std::string_view labels = {});

// The same sums, one per combination of the values of the labels `by` that occurs: keyed by those
// values in the order of `by`, joined with a space ("PATCH statefulsets.apps/v1"), a missing label
// read as "". Empty when no sample matches.
std::map<std::string, double> sumSamplesBy(std::string_view exposition, std::string_view name,
                                           std::span<const std::string_view> by,
                                           std::string_view labels = {});

}  // namespace shardscaler::test_kit
