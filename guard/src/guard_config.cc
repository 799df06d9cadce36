#include "shardscaler/guard/guard_config.h"

#include <algorithm>

namespace shardscaler::guard {

bool GuardConfig::exempt(const UserInfo& user) const {
  if (!self_user.empty() && user.username == self_user) return true;
  if (std::ranges::find(exempt_users, user.username) != exempt_users.end()) return true;
  return std::ranges::any_of(user.groups, [&](const std::string& g) {
    return std::ranges::find(exempt_groups, g) != exempt_groups.end();
  });
}

bool GuardConfig::cleanupUser(std::string_view username) const {
  return std::ranges::find(cleanup_users, username) != cleanup_users.end();
}

}  // namespace shardscaler::guard
