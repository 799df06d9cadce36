// metav1.Time and metav1.MicroTime as the API server writes and reads them (Leases, Events,
// conditions). Pure conversions: nothing here reads a clock.
#pragma once

#include <string>
#include <string_view>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s {

// metav1.Time: RFC 3339 in UTC to the whole second, "2006-01-02T15:04:05Z" (annotations,
// certificate times in messages).
std::string formatTime(Clock::SystemTime t);
// metav1.MicroTime: RFC 3339 in UTC with microseconds, "2006-01-02T15:04:05.000000Z".
std::string formatMicroTime(Clock::SystemTime t);
// Reads both, and any RFC 3339 time (fraction optional, "Z" or a +hh:mm offset).
Result<Clock::SystemTime> parseMicroTime(std::string_view text);

}  // namespace shardscaler::k8s
