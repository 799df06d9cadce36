// Typed errors of the Kubernetes client: every fallible call returns Result<T>.
// An Error never hides the server's Status: reason, code and message are kept as sent.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace shardscaler::k8s {

enum class ErrorKind {
  NotFound,         // 404
  AlreadyExists,    // 409 reason AlreadyExists
  Conflict,         // 409 (stale resourceVersion, precondition failed)
  Gone,             // 410 (resourceVersion too old; reasons Gone and Expired)
  Forbidden,        // 403
  Unauthorized,     // 401
  Invalid,          // 422
  BadRequest,       // 400
  TooManyRequests,  // 429, with retry_after
  ServerError,      // 5xx other than 504
  Transport,        // connection refused, TLS failure, reset ...
  Timeout,          // client-side timeout, dead watch connection, 504, reason (Server)Timeout
  Decode,           // the response was not what the API promises
  Config,           // kubeconfig / in-cluster configuration problem
  Cancelled,        // the caller asked to stop
  Other,            // any other HTTP status
};

std::string_view toString(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::Other;
  int http_status = 0;  // 0 when no HTTP response was received
  std::string reason;   // metav1.Status.reason when the server sent one
  std::string message;  // what a person needs to act on
  // From the Retry-After header, else the Status details.retryAfterSeconds.
  std::optional<std::chrono::seconds> retry_after;

  // "Forbidden (403): <message>"; "Transport: <message>" when no HTTP status was received.
  std::string describe() const;
  bool is(ErrorKind k) const { return kind == k; }
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> makeError(ErrorKind kind, std::string message) {
  Error error;
  error.kind = kind;
  error.message = std::move(message);
  return std::unexpected(std::move(error));
}

}  // namespace shardscaler::k8s
