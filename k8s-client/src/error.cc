#include "shardscaler/k8s_client/error.h"

#include <string>

namespace shardscaler::k8s {

std::string_view toString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::NotFound:
      return "NotFound";
    case ErrorKind::AlreadyExists:
      return "AlreadyExists";
    case ErrorKind::Conflict:
      return "Conflict";
    case ErrorKind::Gone:
      return "Gone";
    case ErrorKind::Forbidden:
      return "Forbidden";
    case ErrorKind::Unauthorized:
      return "Unauthorized";
    case ErrorKind::Invalid:
      return "Invalid";
    case ErrorKind::BadRequest:
      return "BadRequest";
    case ErrorKind::TooManyRequests:
      return "TooManyRequests";
    case ErrorKind::ServerError:
      return "ServerError";
    case ErrorKind::Transport:
      return "Transport";
    case ErrorKind::Timeout:
      return "Timeout";
    case ErrorKind::Decode:
      return "Decode";
    case ErrorKind::Config:
      return "Config";
    case ErrorKind::Cancelled:
      return "Cancelled";
    case ErrorKind::Other:
      return "Other";
  }
  return "Unknown";
}

std::string Error::describe() const {
  std::string text(toString(kind));
  if (http_status != 0) text += " (" + std::to_string(http_status) + ")";
  text += ": ";
  text += message;
  if (retry_after) text += " (retry after " + std::to_string(retry_after->count()) + "s)";
  return text;
}

}  // namespace shardscaler::k8s
