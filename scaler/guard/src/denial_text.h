// What every denial message of the guard says the same way: who may act anyway, and what a failed
// read may reveal of itself. Private to guard.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/guard/decision.h"
#include "shardscaler/guard/guard_config.h"

namespace shardscaler::guard::detail {

// The message's last sentence: who may do it anyway ("To override, act as a member of group
// system:masters (--guard-exempt-groups).").
std::string overrideHint(const GuardConfig& config);

// The kind of a failed read ("Forbidden", "Timeout", "Transport"): what a denial message may say
// of it. The rest of the error (the server's own words) goes to the log only.
std::string failureKind(std::string_view error);

// Sets `verdict` to allowed for `reason` with a short note, and returns a copy.
Verdict allowed(Verdict& verdict, std::string_view reason, std::string note);
// Sets `verdict` to denied by `rule`: the message names the rule, says `what`, and ends with
// overrideHint; `detail` is for the log only. Returns a copy.
Verdict denied(Verdict& verdict, std::string_view rule, std::string_view what, std::string detail,
               const GuardConfig& config);

}  // namespace shardscaler::guard::detail
