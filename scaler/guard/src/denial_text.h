// What every denial message of the guard says the same way: who may act anyway, and what a failed
// read may reveal of itself. Private to guard.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/guard/guard_config.h"

namespace shardscaler::guard::detail {

// The message's last sentence: who may do it anyway ("To override, act as a member of group
// system:masters (--guard-exempt-groups).").
std::string overrideHint(const GuardConfig& config);

// The kind of a failed read ("Forbidden", "Timeout", "Transport"): what a denial message may say
// of it. The rest of the error (the server's own words) goes to the log only.
std::string failureKind(std::string_view error);

}  // namespace shardscaler::guard::detail
