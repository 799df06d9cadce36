#include "shardscaler/base/log_context.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "log_event.h"

namespace shardscaler::base {

LogContext::LogContext(std::initializer_list<LogField> fields,
                       std::shared_ptr<spdlog::logger> logger)
    : fields_(fields), logger_(std::move(logger)) {}

LogContext LogContext::with(std::initializer_list<LogField> more) const {
  LogContext copy({}, logger_);
  copy.fields_.reserve(fields_.size() + more.size());
  copy.fields_ = fields_;
  copy.fields_.insert(copy.fields_.end(), more.begin(), more.end());
  return copy;
}

void LogContext::log(LogLevel level, std::string_view msg,
                     std::initializer_list<LogField> fields) const {
  spdlog::logger& logger = logger_ ? *logger_ : *spdlog::default_logger_raw();
  emitEvent(logger, level, msg, fields_, {fields.begin(), fields.size()});
}

}  // namespace shardscaler::base
