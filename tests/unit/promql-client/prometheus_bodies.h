// Bodies the Prometheus HTTP API answers with, for the client's tests against the kit's
// HttpServer. Only the envelope is built here; the result JSON is the test's own.
#pragma once

#include <string>

namespace shardscaler::promql::testing {

// {"status":"success","data":{"resultType":<type>,"result":<result>}} with optional warnings.
inline std::string successBody(const std::string& result_type, const std::string& result,
                               const std::string& warnings_json = "") {
  std::string body = R"({"status":"success","data":{"resultType":")" + result_type +
                     R"(","result":)" + result + "}";
  if (!warnings_json.empty()) body += R"(,"warnings":)" + warnings_json;
  return body + "}";
}

// {"status":"error","errorType":...,"error":...}
inline std::string errorBody(const std::string& error_type, const std::string& error,
                             const std::string& warnings_json = "") {
  std::string body =
      R"({"status":"error","errorType":")" + error_type + R"(","error":")" + error + "\"";
  if (!warnings_json.empty()) body += R"(,"warnings":)" + warnings_json;
  return body + "}";
}

}  // namespace shardscaler::promql::testing
