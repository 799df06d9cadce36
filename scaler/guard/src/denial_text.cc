#include "denial_text.h"

#include <vector>

namespace shardscaler::guard::detail {
namespace {

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace

std::string overrideHint(const GuardConfig& config) {
  if (!config.exempt_groups.empty()) {
    return "To override, act as a member of group " + joined(config.exempt_groups, " or ") +
           " (--guard-exempt-groups).";
  }
  if (!config.exempt_users.empty()) {
    return "To override, act as user " + joined(config.exempt_users, " or ") +
           " (--guard-exempt-users).";
  }
  return "No identity is exempt (--guard-exempt-users, --guard-exempt-groups).";
}

std::string failureKind(std::string_view error) {
  return std::string(error.substr(0, error.find_first_of(" (:")));
}

}  // namespace shardscaler::guard::detail
