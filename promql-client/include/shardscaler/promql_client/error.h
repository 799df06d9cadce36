// Typed errors of the PromQL client: every query returns Result<T>, an Error when it failed.
// An Error keeps the server's errorType, HTTP status and the first line of its API error; it never
// carries a raw response body in `message`, which callers put where others read it (a status, an
// Event). What else the server sent is in `detail`, for logs.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscaler::promql {

enum class ErrorKind {
  // The API's own errorType values (https://prometheus.io/docs/prometheus/latest/querying/api/).
  BadData,      // "bad_data": the query or a parameter is malformed (HTTP 400)
  Execution,    // "execution": the query failed while running (HTTP 422)
  Timeout,      // "timeout": the server's query timeout was hit (HTTP 503)
  Canceled,     // "canceled": the server canceled the query (HTTP 503)
  Unavailable,  // "unavailable": the server cannot answer now (HTTP 503)
  NotFound,     // "not_found": the endpoint or object does not exist (HTTP 404)
  Internal,     // "internal": a server-side bug (HTTP 500)
  // Failures outside the API's vocabulary.
  Transport,         // connection refused, reset, TLS failure, name resolution ...
  ClientTimeout,     // the client's own deadline passed before a full response arrived
  Decode,            // the response was not the JSON the API promises
  Http,              // an HTTP error without an API error body (e.g. a proxy's 502 page)
  Config,            // the client options cannot work (unreadable token file, bad URL)
  ResponseTooLarge,  // the body exceeded ClientOptions::max_response_bytes; reading stopped
};

std::string_view toString(ErrorKind kind);
// Maps the API's errorType string; unknown types map to Internal (the API's catch-all).
ErrorKind errorKindFromApiType(std::string_view error_type);

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  int http_status = 0;       // 0 when no HTTP response was received
  std::string error_type{};  // the API's errorType as sent ("" when there was none)
  // What a person needs to act on: names the URL and the query, and of the response only its
  // HTTP status, its errorType and the first line of its API error (bounded). Never body text.
  std::string message{};
  // For logs only, never a status or an Event: a bounded, escaped excerpt of a body that was not
  // a Prometheus API response, or what the decoder found wrong in it ("" when nothing).
  std::string detail{};
  std::vector<std::string> warnings{};  // warnings the server sent along with the error

  // "bad_data (HTTP 400): <message>"
  std::string describe() const;
  bool is(ErrorKind k) const { return kind == k; }
};

template <typename T>
using Result = std::expected<T, Error>;

inline Error makeError(ErrorKind kind, std::string message, int http_status = 0) {
  Error error;
  error.kind = kind;
  error.http_status = http_status;
  error.message = std::move(message);
  return error;
}

// A setting the client was given that cannot work, as the error of a Result.
inline std::unexpected<Error> configError(std::string message) {
  return std::unexpected(makeError(ErrorKind::Config, std::move(message)));
}

}  // namespace shardscaler::promql
