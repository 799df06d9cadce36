// Who a request to the aggregated API comes from: the API server's front proxy proves itself with
// a client certificate from the request-header CA, then names the user in headers. Pure. Must
// never read a user from headers of a connection whose certificate did not verify against that
// CA, or whose name is not allowed: anyone could send those headers.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscaler/base/expected.h"
#include "shardscaler/certificates/trust_bundle.h"
#include "shardscaler/serving/http_exchange.h"

namespace shardscaler::metrics_api {

// The ConfigMap kube-system/extension-apiserver-authentication, which the API server publishes.
inline constexpr std::string_view kAuthenticationConfigMapNamespace = "kube-system";
inline constexpr std::string_view kAuthenticationConfigMapName =
    "extension-apiserver-authentication";

// The API server's --requestheader-* flags as that ConfigMap carries them.
struct RequestHeaderConfig {
  // requestheader-client-ca-file; nullptr when the cluster publishes none (no aggregation layer).
  std::shared_ptr<const certificates::TrustBundle> client_ca;
  std::vector<std::string> allowed_names;  // empty: any certificate the CA signed
  std::vector<std::string> username_headers;
  std::vector<std::string> group_headers;
  std::vector<std::string> extra_header_prefixes;
};

// Reads the ConfigMap's data. A missing requestheader-client-ca-file gives a config without a CA
// (every request is then refused, see authenticate()); a CA that does not parse, or a list that
// is not a JSON array of strings, is an error naming the key.
Expected<RequestHeaderConfig> requestHeaderConfigFromConfigMap(const nlohmann::json& config_map);

struct UserInfo {
  std::string name;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
  friend bool operator==(const UserInfo&, const UserInfo&) = default;
};

// The user of a request, as apiserver's request-header authenticator finds it: the connection's
// certificate verified against config.client_ca (the TLS layer checks the chain; `peer.verified`
// says so), its common name among allowed_names when there are any, then the first non-empty
// username header, every value of the group headers, and the extra headers (prefix removed, key
// lower-cased and percent-decoded). "system:authenticated" is added to the groups, as the API
// server's authenticators do. The error (HTTP 401) says what is missing, e.g. that the caller
// presented no front-proxy certificate.
Expected<UserInfo> authenticate(const serving::PeerCertificate& peer,
                                const serving::HeaderList& headers,
                                const RequestHeaderConfig& config);

}  // namespace shardscaler::metrics_api
