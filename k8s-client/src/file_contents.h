// Reads small files (credentials, CA bundles, kubeconfigs) whole, with errno text on failure.
#pragma once

#include <filesystem>
#include <string>

#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s::detail {

// Config error "cannot read <what> "<path>": <strerror>" when the file cannot be read.
Result<std::string> readFileContents(const std::filesystem::path& path, std::string_view what);

}  // namespace shardscaler::k8s::detail
