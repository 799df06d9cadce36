#include "denial_text.h"

#include <fmt/format.h>

#include "shardscaler/api/well_known.h"

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

Verdict VerdictBuilder::allow(std::string_view reason, std::string note) {
  verdict_.allowed = true;
  verdict_.reason = reason;
  verdict_.message = std::move(note);
  return verdict_;
}

Verdict VerdictBuilder::deny(std::string_view rule, std::string_view what, std::string for_log) {
  verdict_.allowed = false;
  verdict_.reason = rule;
  verdict_.detail = std::move(for_log);
  verdict_.message =
      fmt::format("{}{}: {} {}", api::kGuardDenialPrefix, rule, what, overrideHint(config_));
  return verdict_;
}

}  // namespace shardscaler::guard::detail
