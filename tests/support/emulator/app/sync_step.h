// What every step of the emulated operator's sync shares: reading an object's name and
// namespace, the conflict retry budget, and wording a failed step as the operator does
// ("<what failed>: <the API error>"). Header-only; no I/O.
#pragma once

#include <expected>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "shard_naming.h"
#include "shardscaler/k8s_client/error.h"

namespace shardscaler::emulator {

// retry.DefaultRetry: 5 attempts on 409 Conflict.
inline constexpr int kConflictRetries = 5;

inline std::string nameOf(const Json& object) {
  return objectField(object, "metadata").value("name", "");
}

inline std::string namespaceOf(const Json& object) {
  return objectField(object, "metadata").value("namespace", "");
}

// The error with `context` in front of its description (fmt.Errorf("context: %w", err)).
inline std::unexpected<k8s::Error> failedStep(const std::string& context, const k8s::Error& error) {
  k8s::Error wrapped = error;
  wrapped.message = context + ": " + error.describe();
  return std::unexpected(std::move(wrapped));
}

}  // namespace shardscaler::emulator
