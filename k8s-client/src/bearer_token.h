// The bearer token to send: a static one, or a file re-read at most once per interval so that
// rotated service-account tokens are picked up without reading the file on every request.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "shardscaler/k8s_client/clock.h"
#include "shardscaler/k8s_client/error.h"

namespace shardscaler::k8s::detail {

class BearerToken {
 public:
  BearerToken(std::string static_token, std::string token_file,
              std::chrono::seconds refresh_interval, std::shared_ptr<const Clock> clock);

  // "" when no token is configured. An error only when the file has never been readable;
  // a failed re-read keeps the last good token (and logs a warning).
  Result<std::string> current();

  // After a 401 the next request re-reads the file at once, whatever the interval.
  void invalidate();

 private:
  const std::string static_token_;
  const std::string token_file_;
  const std::chrono::seconds refresh_interval_;
  const std::shared_ptr<const Clock> clock_;
  std::mutex mutex_;
  std::string cached_;
  std::optional<Clock::MonotonicTime> last_read_;
};

}  // namespace shardscaler::k8s::detail
