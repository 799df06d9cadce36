#include "shardscaler/telemetry/build_info.h"

#ifndef SHARDSCALER_VERSION
#define SHARDSCALER_VERSION "0.0.0"
#endif
#ifndef SHARDSCALER_GIT_COMMIT
#define SHARDSCALER_GIT_COMMIT "unknown"
#endif

namespace shardscaler::telemetry {

BuildInfo buildInfo() { return {SHARDSCALER_VERSION, SHARDSCALER_GIT_COMMIT}; }

}  // namespace shardscaler::telemetry
