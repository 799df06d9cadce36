// Decodes the body of a Prometheus HTTP API query response (the JSON envelope and every result
// type) in one streaming pass. It never performs I/O and never throws on malformed input.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscaler/base/expected.h"
#include "shardscaler/promql_client/query_result.h"

namespace shardscaler::promql {

// The envelope: {"status": "success"|"error", "data": ..., "errorType", "error", "warnings"}.
struct ApiResponse {
  bool success = false;
  std::string error_type{};  // set when !success
  std::string error{};       // set when !success
  std::vector<std::string> warnings{};
  // Set when success; an error response may carry data too, which is decoded and dropped.
  std::optional<QueryResult> result{};
};

// Decodes `body`. On failure returns a message saying what was wrong and where (byte offset).
// The result's warnings are the envelope's warnings (and "infos", which newer servers send).
Expected<ApiResponse> decodeApiResponse(std::string_view body);

// Parses a sample value as the API writes it: Go's float format plus "NaN", "+Inf", "-Inf".
std::optional<double> parseSampleValue(std::string_view text);

}  // namespace shardscaler::promql
