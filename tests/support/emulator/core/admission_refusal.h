// Recognises a write that an admission webhook refused (or that failed because the webhook could
// not be called), from the API server's Status message, so the action log can say so. Pure.
#pragma once

#include <optional>
#include <string>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::emulator {

struct AdmissionRefusal {
  std::string webhook;  // the webhook's name as the API server quotes it
  // true: the webhook answered and denied ("admission webhook \"w\" denied the request...");
  // false: calling it failed under failurePolicy Fail ("failed calling webhook \"w\"...").
  bool denied = true;
};

// The refusal an Error carries, or nullopt for any other error.
std::optional<AdmissionRefusal> admissionRefusal(const k8s::Error& error);

}  // namespace shardscaler::emulator
