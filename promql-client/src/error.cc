#include "shardscaler/promql_client/error.h"

#include <string>

namespace shardscaler::promql {

std::string_view toString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::BadData:
      return "bad_data";
    case ErrorKind::Execution:
      return "execution";
    case ErrorKind::Timeout:
      return "timeout";
    case ErrorKind::Canceled:
      return "canceled";
    case ErrorKind::Unavailable:
      return "unavailable";
    case ErrorKind::NotFound:
      return "not_found";
    case ErrorKind::Internal:
      return "internal";
    case ErrorKind::Transport:
      return "transport";
    case ErrorKind::ClientTimeout:
      return "client_timeout";
    case ErrorKind::Decode:
      return "decode";
    case ErrorKind::Http:
      return "http";
    case ErrorKind::Config:
      return "config";
    case ErrorKind::ResponseTooLarge:
      return "response_too_large";
  }
  return "unknown";
}

ErrorKind errorKindFromApiType(std::string_view error_type) {
  if (error_type == "bad_data") return ErrorKind::BadData;
  if (error_type == "execution") return ErrorKind::Execution;
  if (error_type == "timeout") return ErrorKind::Timeout;
  if (error_type == "canceled") return ErrorKind::Canceled;
  if (error_type == "unavailable") return ErrorKind::Unavailable;
  if (error_type == "not_found") return ErrorKind::NotFound;
  return ErrorKind::Internal;
}

std::string Error::describe() const {
  std::string out(toString(kind));
  if (http_status != 0) out += " (HTTP " + std::to_string(http_status) + ")";
  out += ": ";
  out += message;
  return out;
}

}  // namespace shardscaler::promql
