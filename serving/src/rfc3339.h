// RFC 3339 UTC times ("2026-11-25T10:00:00Z") as Kubernetes writes them in annotations.
// Private to the serving component; whole seconds only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "shardscaler/serving/x509.h"

namespace shardscaler::serving::detail {

std::string formatRfc3339(SystemTime time);
// Accepts "YYYY-MM-DDTHH:MM:SSZ" and a fractional part before the Z; nullopt for anything else.
std::optional<SystemTime> parseRfc3339(std::string_view text);

}  // namespace shardscaler::serving::detail
