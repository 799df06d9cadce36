// The shard guard's decision: from one admission request, the live ShardSet/target/namespace and
// `now`, allow or deny with a message that names the rule, the shard and its deadline. Pure but for
// the reads it asks of LiveObjects; it never writes, never throws, and on doubt (a failed read, an
// unreadable deadline or shard index, an invalid ShardSet) it denies.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/guard/admission_review.h"
#include "shardscaler/guard/guard_config.h"
#include "shardscaler/guard/live_objects.h"

namespace shardscaler::guard {

// The rules that deny (names as in the denial message and the denials metric).
inline constexpr std::string_view kRuleActiveShard = "ActiveShard";
inline constexpr std::string_view kRuleRetainedBeforeDeadline = "RetainedBeforeDeadline";
inline constexpr std::string_view kRuleReattach = "Reattach";
// An UPDATE that changes what the DELETE rules read (the ShardSet and retained labels, the shard
// index, the deadline): refused, or a later DELETE would pass that should not.
inline constexpr std::string_view kRuleGuardedMetadata = "GuardedMetadata";
// Under whenScaled=Retain, an attached shard beyond the shard count (shardscaler detaches it).
inline constexpr std::string_view kRuleRetainOnScaleDown = "RetainOnScaleDown";
inline constexpr std::string_view kRuleUnknownShardIndex = "UnknownShardIndex";
// A retained shard past its deadline whose data a drain has not found shipped yet.
inline constexpr std::string_view kRuleNotDrained = "NotDrained";
// A cleanup identity's DELETE of a retained shard its target does not own: the garbage collector
// follows the ShardSet (a foreground deletion of it), or a read from before the ShardSet's
// finalizer orphaned the shard.
inline constexpr std::string_view kRuleRetainedByShardSet = "RetainedByShardSet";
inline constexpr std::string_view kRuleReadFailed = "ReadFailed";
inline constexpr std::string_view kRuleIncompleteReview = "IncompleteReview";

// Why a request was allowed.
inline constexpr std::string_view kAllowNotGuarded =
    "NotGuarded";                                                 // not a StatefulSet DELETE/UPDATE
inline constexpr std::string_view kAllowUnmanaged = "Unmanaged";  // no shardscaler.io/shardset
// An UPDATE that leaves alone everything the guard's rules read.
inline constexpr std::string_view kAllowNoGuardedChange = "NoGuardedChange";
inline constexpr std::string_view kAllowExempt = "Exempt";
// shardscaler's own write (a detach, a re-attach, its labels): its user and its field manager
// (GuardConfig::ownWrite).
inline constexpr std::string_view kAllowOwnWrite = "OwnWrite";
inline constexpr std::string_view kAllowShardSetGone = "ShardSetGone";  // released or orphaned
inline constexpr std::string_view kAllowCleanup = "Cleanup";            // GC / namespace controller
inline constexpr std::string_view kAllowDeadlinePassed = "DeadlinePassed";
inline constexpr std::string_view kAllowBeyondShardCount = "BeyondShardCount";

struct Verdict {
  bool allowed = true;
  std::string reason;  // one of the kRule*/kAllow* names
  // The denial message (the API server hands it to the client); for an allowed request a short
  // note. It states the rule's facts; what the request carried is repeated only short and
  // printable, and a failed read only by its kind.
  std::string message;
  // For the log only: the full error of a read or decode that failed.
  std::string detail;

  // What the guard learnt of the shard, for the log line (empty/nullopt when not read).
  std::string shard_set;
  std::string target;  // "Prometheus main"
  std::optional<int32_t> shard_index;
  std::string deadline;  // the annotation as written
};

Verdict decide(const AdmissionRequest& request, LiveObjects& live,
               std::chrono::system_clock::time_point now, const GuardConfig& config);

}  // namespace shardscaler::guard
