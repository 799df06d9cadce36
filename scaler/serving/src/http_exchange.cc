#include "shardscaler/serving/http_exchange.h"

#include <strings.h>

namespace shardscaler::serving {

std::optional<std::string_view> Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return std::string_view(value);
    }
  }
  return std::nullopt;
}

Response Response::text(int status, std::string body) {
  return Response{status, "text/plain; charset=utf-8", {}, std::move(body)};
}

Response Response::json(int status, std::string body) {
  return Response{status, "application/json", {}, std::move(body)};
}

}  // namespace shardscaler::serving
