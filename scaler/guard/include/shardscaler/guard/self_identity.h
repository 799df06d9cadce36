// Finds the user that shardscaler's own API requests arrive as, so the guard never refuses
// shardscaler's own detaches and deletions. It must never guess: no identity is an error.
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/k8s_client/kube_client.h"
#include "shardscaler/k8s_client/kube_config.h"

namespace shardscaler::guard {

struct SelfIdentity {
  std::string username;
  std::vector<std::string> groups;
  std::string source;  // "client certificate", "TokenReview", "--guard-self-user", "basic auth"
};

struct IdentityError {
  std::string message;  // what was tried and what to do, e.g. grant create on tokenreviews
  // The API server could not be asked (no answer, 5xx, 429): asking again later may succeed.
  bool retryable = false;
};

// As the API server authenticates shardscaler: the client certificate's subject (CN the user, each
// O a group) when the config has one, else a TokenReview (authentication.k8s.io/v1) of its bearer
// token, else the basic-auth user name.
std::expected<SelfIdentity, IdentityError> discoverSelfIdentity(k8s::KubeClient& client,
                                                                const k8s::KubeConfig& config);

// The subject of a PEM certificate: CN as username, O entries as groups.
Expected<SelfIdentity> identityFromCertificatePem(const std::string& pem);

}  // namespace shardscaler::guard
