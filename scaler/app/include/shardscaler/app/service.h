// The sub-commands main dispatches to: `shardscaler run`, `shardscaler plan` and
// `shardscaler release`.
// They must never call exit(): they return the process exit code to main.
#pragma once

#include "shardscaler/app/run_options.h"

namespace shardscaler::app {

int runService(const RunOptions& options);
int runPlan(const PlanOptions& options);
int runRelease(const ReleaseOptions& options);

}  // namespace shardscaler::app
