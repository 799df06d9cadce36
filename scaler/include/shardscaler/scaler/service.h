// The sub-commands main dispatches to: `shardscaler run` and `shardscaler plan`.
// They must never call exit(): they return the process exit code to main.
#pragma once

#include "shardscaler/scaler/run_options.h"

namespace shardscaler::scaler {

int runService(const RunOptions& options);
int runPlan(const PlanOptions& options);

}  // namespace shardscaler::scaler
