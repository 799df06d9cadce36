// How the operator carries an existing object's metadata into the object it writes over it
// (pkg/k8s/k8s.go mergeMetadata and friends). Pure JSON transformations, no I/O.
#pragma once

#include <nlohmann/json.hpp>

namespace shardscaler::emulator {

using Json = nlohmann::json;

// Copies metadata.resourceVersion from `existing`; labels and annotations become the existing
// ones without keys under "operator.prometheus.io/", overridden by the desired ones.
void mergeMetadata(Json& desired, const Json& existing);

// Adds existing spec.template annotations under "kubectl.kubernetes.io/" (kubectl rollout
// restart) to the desired template.
void copyKubectlTemplateAnnotations(Json& desired, const Json& existing);

// The existing owner references plus each desired one not already there (equal as a whole).
Json mergeOwnerReferences(const Json& existing_refs, const Json& desired_refs);

}  // namespace shardscaler::emulator
