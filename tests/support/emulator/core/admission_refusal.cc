#include "admission_refusal.h"

#include <string_view>

namespace shardscaler::emulator {

namespace {

// The quoted name after `prefix` in `message` (Go's %q of the webhook name), if present.
std::optional<std::string> quotedAfter(std::string_view message, std::string_view prefix) {
  const auto at = message.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  const auto open = at + prefix.size();
  if (open >= message.size() || message[open] != '"') return std::nullopt;
  const auto close = message.find('"', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return std::string(message.substr(open + 1, close - open - 1));
}

}  // namespace

std::optional<AdmissionRefusal> admissionRefusal(const k8s::Error& error) {
  // k8s.io/apiserver/pkg/admission/plugin/webhook/errors: ToStatusErr (a denial, 400 unless the
  // webhook set a code) and "failed calling webhook" (an internal error, 500).
  if (error.http_status == 0) return std::nullopt;
  if (auto name = quotedAfter(error.message, "admission webhook ")) {
    const auto rest = std::string_view(error.message).substr(error.message.find(*name));
    if (rest.find("denied the request") != std::string_view::npos) {
      return AdmissionRefusal{.webhook = *name, .denied = true};
    }
  }
  if (auto name = quotedAfter(error.message, "failed calling webhook ")) {
    return AdmissionRefusal{.webhook = *name, .denied = false};
  }
  return std::nullopt;
}

}  // namespace shardscaler::emulator
