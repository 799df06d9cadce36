// Bounded polling for the control plane's tests: waits on a condition with a deadline.
// Never waits without a bound, and never sleeps in place of a condition.
#pragma once

#include <chrono>
#include <functional>

namespace shardscaler::testenv {

// Polls `condition` every 100 ms until it holds (true) or `timeout` passes (false).
bool waitFor(std::chrono::milliseconds timeout, const std::function<bool()>& condition);

}  // namespace shardscaler::testenv
