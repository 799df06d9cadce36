// Fixtures for kubeconfig and REST tests (scratch files come from test_kit::TempDir).
// Test-only; never touches anything outside the directory a test gives it.
#pragma once

#include <filesystem>
#include <string>

#include "shardscaler/test_kit/temp_dir.h"

namespace shardscaler::k8s::testing {

// Syntactically a PEM certificate block; the config loader only checks for the marker.
inline const char* kFakeCaPem =
    "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";

}  // namespace shardscaler::k8s::testing
