// Kubernetes' syntax for names and labels (apimachinery's util/validation): DNS-1123 labels and
// subdomains, label keys and label values. Pure predicates; they never trim or lowercase input.
#pragma once

#include <string_view>

namespace shardscaler::k8s {

// A namespace or Service name: at most 63 of [a-z0-9-], alphanumeric at both ends.
bool isDns1123Label(std::string_view s);
// An object name: at most 253 characters of dot-separated parts, each of [a-z0-9-] and
// alphanumeric at both ends. As apimachinery's IsDNS1123Subdomain, only the whole is limited in
// length, not each part (a 64-character Lease name is valid).
bool isDns1123Subdomain(std::string_view s);
// A label key, `[prefix/]name`: the prefix a DNS-1123 subdomain, the name at most 63 of
// [A-Za-z0-9-_.], alphanumeric at both ends.
bool isQualifiedName(std::string_view s);
// A label value: empty, or what the name part of a label key may be.
bool isValidLabelValue(std::string_view s);

}  // namespace shardscaler::k8s
