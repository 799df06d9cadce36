// metav1.Time and metav1.MicroTime for the client: the formatters and the codec are k8s_meta's
// (shardscaler/k8s_meta/time.h); reading gives the client's Result. Pure: nothing reads a clock.
#pragma once

#include <string_view>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/error.h"
#include "shardscaler/k8s_meta/time.h"

namespace shardscaler::k8s {

// Reads metav1.Time, metav1.MicroTime and any RFC 3339 time (fraction optional, "Z" or a +hh:mm
// offset); a Decode error names the text when it is not one or lies outside what a
// Clock::SystemTime holds (1677..2262).
Result<Clock::SystemTime> parseMicroTime(std::string_view text);

}  // namespace shardscaler::k8s
