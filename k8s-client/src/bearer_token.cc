#include "bearer_token.h"

#include <utility>

#include "shardscaler/base/log.h"

#include "file_contents.h"

namespace shardscaler::k8s::detail {

BearerToken::BearerToken(std::string static_token, std::string token_file,
                         std::chrono::seconds refresh_interval, std::shared_ptr<const Clock> clock)
    : static_token_(std::move(static_token)),
      token_file_(std::move(token_file)),
      refresh_interval_(refresh_interval),
      clock_(std::move(clock)) {}

Result<std::string> BearerToken::current() {
  if (!static_token_.empty() || token_file_.empty()) return static_token_;
  std::lock_guard lock(mutex_);
  auto now = clock_->monotonicNow();
  if (last_read_ && now - *last_read_ < refresh_interval_) return cached_;
  last_read_ = now;
  auto contents = readFileContents(token_file_, "token file");
  std::string token;
  if (contents) {
    token = std::move(*contents);
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                              token.back() == '\t')) {
      token.pop_back();
    }
  }
  if (token.empty()) {
    std::string problem =
        contents ? "token file \"" + token_file_ + "\" is empty" : contents.error().message;
    if (cached_.empty()) return makeError(ErrorKind::Config, problem);
    base::logEvent(base::LogLevel::Warn, "token re-read failed",
                   {{"file", token_file_}, {"problem", problem}, {"action", "keep_last_token"}});
    return cached_;
  }
  cached_ = std::move(token);
  return cached_;
}

void BearerToken::invalidate() {
  std::lock_guard lock(mutex_);
  last_read_.reset();
}

}  // namespace shardscaler::k8s::detail
