// Prometheus durations ("1y2w3d4h5m6s7ms") read and written exactly as prometheus/common
// model.ParseDuration and model.Duration.String do. Pure text handling: no clock, no locale.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include "shardscaler/base/expected.h"

namespace shardscaler::planner {

// Units y(=365d) w(=7d) d h m s ms, strictly in that order, each at most once, each preceded by
// decimal digits; "0" alone is allowed, "" is not; more than 2^63-1 ns is out of range.
// The error texts are Prometheus' own ("not a valid duration string: \"1s1m\"").
Expected<std::chrono::nanoseconds> parsePrometheusDuration(std::string_view text);

// "0s", "90d", "1y", "2w", "1d2h3m4s5ms": y and w only when they divide the rest exactly.
std::string formatPrometheusDuration(std::chrono::nanoseconds duration);

}  // namespace shardscaler::planner
