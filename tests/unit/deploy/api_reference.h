// docs/api.md, the ShardSet API reference, generated from the CRD (deploy/crds): every field of
// spec and status with its type, default, bounds and description, the printer columns and the
// scale subresource. Pure: the test compares it with the committed file and rewrites it on demand.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shardscaler::deploy_test {

// The Markdown of docs/api.md for `crd` (the CustomResourceDefinition as JSON).
std::string apiReference(const nlohmann::json& crd);

}  // namespace shardscaler::deploy_test
