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

// What both decisions (StatefulSets and targets) share: the verdict being built, and the two ways
// it ends. A denial's message names the rule, says what was refused and ends with overrideHint;
// `for_log` goes to the log only.
class VerdictBuilder {
 protected:
  explicit VerdictBuilder(const GuardConfig& config) : config_(config) {}

  Verdict allow(std::string_view reason, std::string note);
  Verdict deny(std::string_view rule, std::string_view what, std::string for_log = {});

  const GuardConfig& config_;
  Verdict verdict_;
};

}  // namespace shardscaler::guard::detail
