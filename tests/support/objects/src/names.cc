#include "shardscaler/test_objects/names.h"

namespace shardscaler::test_objects {

std::string shardName(int32_t index, planner::TargetKind kind, std::string_view target_name) {
  return planner::statefulSetName(kind, target_name, index);
}

std::chrono::system_clock::time_point fixedNow() {
  using namespace std::chrono;
  return sys_days{year{2026} / November / 22} + hours{10};
}

}  // namespace shardscaler::test_objects
