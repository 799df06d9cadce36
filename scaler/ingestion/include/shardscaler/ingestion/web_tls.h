// How a target serves its pods' web port (spec.web.tlsConfig, read by planner::parseTarget), as
// far as shardscaler's reads of the pods' own /metrics need it. A plain value; it fetches nothing.
#pragma once

#include <string>

namespace shardscaler::ingestion {

struct WebTls {
  bool https = false;  // spec.web.tlsConfig is set
  // spec.web.tlsConfig.clientAuthType ("" = NoClientCert).
  std::string client_auth_type;

  friend bool operator==(const WebTls&, const WebTls&) = default;
};

}  // namespace shardscaler::ingestion
