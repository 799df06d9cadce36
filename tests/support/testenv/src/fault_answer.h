// The answers the API fault proxy gives instead of forwarding: metav1.Status bodies shaped as
// kube-apiserver's own for 500, 409 and 429, each saying that the test proxy injected it. Pure.
#pragma once

#include <optional>
#include <string>

#include "request_info.h"
#include "shardscaler/testenv/api_fault_proxy.h"

namespace shardscaler::testenv::control_plane_detail {

struct FaultAnswer {
  int status = 500;
  std::string body;                        // application/json
  std::optional<int> retry_after_seconds;  // the Retry-After header
};

// For ServerError, Conflict and TooManyRequests (std::invalid_argument for the others).
FaultAnswer faultAnswer(ApiFault fault, const RequestInfo& request);

}  // namespace shardscaler::testenv::control_plane_detail
