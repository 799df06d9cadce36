// The fields shared by every event of one unit of work (a reconcile, a request), logged with
// each of them. Must never hold a logger the caller did not hand in.
#pragma once

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include <spdlog/logger.h>

#include "shardscaler/base/log.h"
#include "shardscaler/base/log_field.h"

namespace shardscaler::base {

// E.g. {"key", "ns/name"}, {"reconcile_id", 7}.
class LogContext {
 public:
  LogContext(std::initializer_list<LogField> fields,
             std::shared_ptr<spdlog::logger> logger = nullptr);

  // A context with this one's fields followed by `more`.
  LogContext with(std::initializer_list<LogField> more) const;

  void debug(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::Debug, msg, fields);
  }
  void info(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::Info, msg, fields);
  }
  void warn(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::Warn, msg, fields);
  }
  void error(std::string_view msg, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::Error, msg, fields);
  }
  void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) const;

 private:
  std::vector<LogField> fields_;
  std::shared_ptr<spdlog::logger> logger_;  // null: spdlog's default logger at the time of the call
};

}  // namespace shardscaler::base
