// What the binary was built from (version and commit), for `shardscaler version`, the start-up
// log line and the shardscaler_build_info metric. Must never read anything at run time.
#pragma once

#include <string>

namespace shardscaler::telemetry {

// The commit is taken at CMake configure time (telemetry/CMakeLists.txt).
struct BuildInfo {
  std::string version;
  std::string commit;
};
BuildInfo buildInfo();

}  // namespace shardscaler::telemetry
