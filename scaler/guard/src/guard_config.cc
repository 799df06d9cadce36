#include "shardscaler/guard/guard_config.h"

#include <algorithm>

namespace shardscaler::guard {

std::string_view requesterClass(const UserInfo& user) {
  const std::string& name = user.username;
  constexpr std::string_view kServiceAccount = "system:serviceaccount:";
  if (name.starts_with(kServiceAccount)) {
    return std::string_view(name).substr(kServiceAccount.size()).starts_with("kube-system:")
               ? "controller"
               : "service_account";
  }
  if (name == "system:kube-controller-manager") return "controller";
  if (name.starts_with("system:node:")) return "node";
  if (name.starts_with("system:")) return "system";
  return "user";
}

bool GuardConfig::exempt(const UserInfo& user) const {
  if (std::ranges::find(exempt_users, user.username) != exempt_users.end()) return true;
  return std::ranges::any_of(user.groups, [&](const std::string& g) {
    return std::ranges::find(exempt_groups, g) != exempt_groups.end();
  });
}

bool GuardConfig::ownWrite(const AdmissionRequest& request) const {
  return request.operation == Operation::Update && !self_user.empty() &&
         request.user.username == self_user && !self_field_manager.empty() &&
         request.field_manager == self_field_manager;
}

bool GuardConfig::cleanupUser(std::string_view username) const {
  return std::ranges::find(cleanup_users, username) != cleanup_users.end();
}

}  // namespace shardscaler::guard
