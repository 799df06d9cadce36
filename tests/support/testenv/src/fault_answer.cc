#include "fault_answer.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace shardscaler::testenv::control_plane_detail {

namespace {

constexpr const char* kInjected = " (injected by the test API fault proxy)";

nlohmann::json status(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
}

// <resource>.<group> as the API server names a resource in messages ("statefulsets.apps").
std::string qualifiedResource(const RequestInfo& request) {
  const std::string prefix = "/apis/";
  if (request.path.rfind(prefix, 0) != 0) return request.resource;
  const auto group_end = request.path.find('/', prefix.size());
  return request.resource + "." + request.path.substr(prefix.size(), group_end - prefix.size());
}

}  // namespace

FaultAnswer faultAnswer(ApiFault fault, const RequestInfo& request) {
  switch (fault) {
    case ApiFault::ServerError: {
      auto body =
          status(500, "InternalError",
                 std::string("Internal error occurred: etcdserver: request timed out") + kInjected);
      body["details"] = {{"causes", {{{"message", "etcdserver: request timed out"}}}}};
      return FaultAnswer{.status = 500, .body = body.dump()};
    }
    case ApiFault::Conflict: {
      // What a stale resourceVersion or a failed precondition gets (StatusReasonConflict).
      const std::string what = qualifiedResource(request);
      auto body = status(409, "Conflict",
                         "Operation cannot be fulfilled on " + what + " \"" + request.name +
                             "\": the object has been modified; please apply your changes to "
                             "the latest version and try again" +
                             kInjected);
      body["details"] = {{"name", request.name}, {"kind", request.resource}};
      if (const auto dot = what.find('.'); dot != std::string::npos) {
        body["details"]["group"] = what.substr(dot + 1);
      }
      return FaultAnswer{.status = 409, .body = body.dump()};
    }
    case ApiFault::TooManyRequests: {
      // The max-in-flight filter's answer (apiserver/pkg/server/filters/maxinflight.go).
      auto body = status(429, "TooManyRequests",
                         std::string("Too many requests, please try again later.") + kInjected);
      body["details"] = {{"retryAfterSeconds", 1}};
      return FaultAnswer{.status = 429, .body = body.dump(), .retry_after_seconds = 1};
    }
    case ApiFault::CutWatch:
    case ApiFault::Latency:
      break;
  }
  throw std::invalid_argument("faultAnswer: " + std::string(toString(fault)) +
                              " is not answered in place of the API server");
}

}  // namespace shardscaler::testenv::control_plane_detail
