#include "denial_text.h"

#include <fmt/format.h>

namespace shardscaler::guard::detail {

std::string overrideHint(const GuardConfig& config) {
  if (!config.exempt_groups.empty()) {
    return fmt::format("To override, act as a member of group {} (--guard-exempt-groups).",
                       fmt::join(config.exempt_groups, " or "));
  }
  if (!config.exempt_users.empty()) {
    return fmt::format("To override, act as user {} (--guard-exempt-users).",
                       fmt::join(config.exempt_users, " or "));
  }
  return "No identity is exempt (--guard-exempt-users, --guard-exempt-groups).";
}

std::string failureKind(std::string_view error) {
  return std::string(error.substr(0, error.find_first_of(" (:")));
}

}  // namespace shardscaler::guard::detail
