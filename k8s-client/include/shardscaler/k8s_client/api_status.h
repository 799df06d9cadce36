// Turns an API server answer that is not a success (an HTTP error, a watch ERROR event) into a
// typed Error. It keeps the server's metav1.Status message verbatim and never invents one.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s {

// The kind for a Status reason, else for the HTTP code (client-go's order).
ErrorKind errorKindFor(int http_status, std::string_view reason);

// A non-2xx response. `request` names what was asked ("list pods.v1 (GET /api/v1/pods)"); it
// goes into the message only when the body carries no Status message to keep.
Error errorFromResponse(int http_status, std::string_view body,
                        std::optional<std::chrono::seconds> retry_after_header,
                        std::string_view request);

// A metav1.Status object, e.g. the object of a watch ERROR event (code 410 => Gone).
Error errorFromStatus(const nlohmann::json& status, std::string_view request);

// Parses a Retry-After header value in delta-seconds form; nullopt for anything else.
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value);

}  // namespace shardscaler::k8s
