// The one name of "a value or a message a person can act on", used by every component whose
// errors are plain text. Must never grow a second string-error spelling beside it.
#pragma once

#include <expected>
#include <string>

namespace shardscaler {

// The typed errors (k8s::Result, promql::Result) stay as they are; this is for the rest.
template <typename T>
using Expected = std::expected<T, std::string>;

}  // namespace shardscaler
