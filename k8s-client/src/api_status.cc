#include "shardscaler/k8s_client/api_status.h"

#include <charconv>
#include <string>

#include <boost/beast/http/status.hpp>

namespace shardscaler::k8s {
namespace {

// The reason phrase of an HTTP status ("Not Found"); "" for a code HTTP does not define.
std::string_view httpStatusText(int code) {
  namespace http = boost::beast::http;
  const http::status status = http::int_to_status(static_cast<unsigned>(code));
  if (status == http::status::unknown) return "";
  const auto reason = http::obsolete_reason(status);
  return {reason.data(), reason.size()};
}

// A short, single-line excerpt of a body that was not a Status (an HTML error page, a proxy's
// text), so the message still tells a person what answered.
std::string bodyExcerpt(std::string_view body) {
  constexpr size_t kMax = 200;
  std::string out;
  for (char c : body.substr(0, kMax)) {
    out.push_back((c == '\n' || c == '\r' || c == '\t') ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (body.size() > kMax) out += "...";
  return out;
}

std::optional<std::chrono::seconds> statusRetryAfter(const nlohmann::json& status) {
  auto details = status.find("details");
  if (details == status.end() || !details->is_object()) return std::nullopt;
  auto seconds = details->find("retryAfterSeconds");
  if (seconds == details->end() || !seconds->is_number_integer()) return std::nullopt;
  return std::chrono::seconds(seconds->get<int64_t>());
}

std::string stringField(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

}  // namespace

ErrorKind errorKindFor(int http_status, std::string_view reason) {
  if (reason == "NotFound") return ErrorKind::NotFound;
  if (reason == "AlreadyExists") return ErrorKind::AlreadyExists;
  if (reason == "Conflict") return ErrorKind::Conflict;
  if (reason == "Gone" || reason == "Expired") return ErrorKind::Gone;
  if (reason == "Forbidden") return ErrorKind::Forbidden;
  if (reason == "Unauthorized") return ErrorKind::Unauthorized;
  if (reason == "Invalid") return ErrorKind::Invalid;
  if (reason == "BadRequest") return ErrorKind::BadRequest;
  if (reason == "TooManyRequests") return ErrorKind::TooManyRequests;
  if (reason == "Timeout" || reason == "ServerTimeout") return ErrorKind::Timeout;
  if (reason == "InternalError" || reason == "ServiceUnavailable") return ErrorKind::ServerError;
  switch (http_status) {
    case 400:
      return ErrorKind::BadRequest;
    case 401:
      return ErrorKind::Unauthorized;
    case 403:
      return ErrorKind::Forbidden;
    case 404:
      return ErrorKind::NotFound;
    case 409:
      return ErrorKind::Conflict;
    case 410:
      return ErrorKind::Gone;
    case 422:
      return ErrorKind::Invalid;
    case 429:
      return ErrorKind::TooManyRequests;
    case 504:
      return ErrorKind::Timeout;
    default:
      break;
  }
  if (http_status >= 500 && http_status <= 599) return ErrorKind::ServerError;
  return ErrorKind::Other;
}

Error errorFromStatus(const nlohmann::json& status, std::string_view request) {
  Error error;
  if (!status.is_object()) {
    error.kind = ErrorKind::Decode;
    error.message =
        std::string(request) + ": expected a Status object, got " + bodyExcerpt(status.dump());
    return error;
  }
  auto code = status.find("code");
  if (code != status.end() && code->is_number_integer()) error.http_status = code->get<int>();
  error.reason = stringField(status, "reason");
  error.kind = errorKindFor(error.http_status, error.reason);
  error.message = stringField(status, "message");
  if (error.message.empty()) {
    error.message = std::string(request) + ": the server answered " +
                    (error.reason.empty() ? std::to_string(error.http_status) : error.reason) +
                    " with no message";
  }
  error.retry_after = statusRetryAfter(status);
  return error;
}

Error errorFromResponse(int http_status, std::string_view body,
                        std::optional<std::chrono::seconds> retry_after_header,
                        std::string_view request) {
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  Error error;
  if (parsed.is_object() && stringField(parsed, "kind") == "Status") {
    error = errorFromStatus(parsed, request);
    // The HTTP status is what happened on the wire; a Status without a code keeps it too.
    error.http_status = http_status;
    error.kind = errorKindFor(http_status, error.reason);
  } else {
    error.http_status = http_status;
    error.kind = errorKindFor(http_status, "");
    error.message = std::string(request) + ": the server answered " + std::to_string(http_status);
    auto text = httpStatusText(http_status);
    if (!text.empty()) error.message += " " + std::string(text);
    std::string excerpt = bodyExcerpt(body);
    if (excerpt.empty()) {
      error.message += " with an empty body";
    } else {
      error.message += ": " + excerpt;
    }
  }
  if (retry_after_header) error.retry_after = retry_after_header;
  return error;
}

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r' ||
                            value.back() == '\n')) {
    value.remove_suffix(1);
  }
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size() || seconds < 0) return std::nullopt;
  return std::chrono::seconds(seconds);
}

}  // namespace shardscaler::k8s
