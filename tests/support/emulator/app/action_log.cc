#include "action_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "shardscaler/k8s_client/meta_time.h"

namespace shardscaler::emulator {

ActionLog::ActionLog(const std::string& path) {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
}

ActionLog::~ActionLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ActionLog::record(const Action& action) {
  if (fd_ < 0) return;
  nlohmann::json line{{"time", k8s::formatMicroTime(std::chrono::system_clock::now())},
                      {"verb", action.verb},
                      {"kind", action.kind},
                      {"namespace", action.ns},
                      {"name", action.name},
                      {"shard", action.shard ? nlohmann::json(*action.shard) : nlohmann::json()},
                      {"owner", action.owner},
                      {"reason", action.reason},
                      {"outcome", action.outcome}};
  if (!action.subresource.empty()) line["subresource"] = action.subresource;
  if (action.generation) line["generation"] = *action.generation;
  if (!action.denied_by.empty()) line["denied_by"] = action.denied_by;
  if (!action.webhook_failed.empty()) line["webhook_failed"] = action.webhook_failed;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk must not stop the emulator; stderr still has the log
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace shardscaler::emulator
