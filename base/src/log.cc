#include "shardscaler/base/log.h"

#include <utility>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "log_event.h"
#include "log_text.h"

namespace shardscaler::base {
namespace {

thread_local PendingFields pending_fields;

class FieldsScope {
 public:
  FieldsScope(std::span<const LogField> context, std::span<const LogField> call)
      : saved_(pending_fields) {
    pending_fields = {context, call};
  }
  ~FieldsScope() { pending_fields = saved_; }
  FieldsScope(const FieldsScope&) = delete;
  FieldsScope& operator=(const FieldsScope&) = delete;

 private:
  PendingFields saved_;
};

// The loggers whose sinks carry makeLogFormatter's layout, which writes the pending fields.
class FieldLogger final : public spdlog::logger {
 public:
  using spdlog::logger::logger;
};

}  // namespace

const PendingFields& pendingFields() { return pending_fields; }

void emitEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
               std::span<const LogField> context, std::span<const LogField> call) {
  const auto spd_level = toSpdlogLevel(level);
  if (!logger.should_log(spd_level)) return;
  if (dynamic_cast<const FieldLogger*>(&logger) != nullptr) {
    FieldsScope scope(context, call);
    logger.log(spd_level, spdlog::string_view_t(msg.data(), msg.size()));
    return;
  }
  std::string line(msg);
  for (const auto fields : {context, call}) {
    for (const LogField& f : fields) appendTextField(line, f);
  }
  logger.log(spd_level, line);
}

Expected<LogLevel> parseLogLevel(std::string_view text) {
  if (text == "debug") return LogLevel::Debug;
  if (text == "info") return LogLevel::Info;
  if (text == "warn" || text == "warning") return LogLevel::Warn;
  if (text == "error") return LogLevel::Error;
  return std::unexpected(fmt::format("\"{}\" is not one of debug, info, warn, error", text));
}

Expected<LogFormat> parseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::Text;
  if (text == "json") return LogFormat::Json;
  return std::unexpected(fmt::format("\"{}\" is not one of text, json", text));
}

std::string_view toString(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Info:
      return "info";
    case LogLevel::Warn:
      return "warn";
    case LogLevel::Error:
      return "error";
  }
  return "info";
}

std::string_view toString(LogFormat format) { return format == LogFormat::Json ? "json" : "text"; }

spdlog::level::level_enum toSpdlogLevel(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return spdlog::level::debug;
    case LogLevel::Info:
      return spdlog::level::info;
    case LogLevel::Warn:
      return spdlog::level::warn;
    case LogLevel::Error:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> makeLogger(std::string name, LogLevel level, LogFormat format,
                                           spdlog::sink_ptr sink) {
  sink->set_formatter(makeLogFormatter(format));
  auto logger = std::make_shared<FieldLogger>(std::move(name), std::move(sink));
  logger->set_level(toSpdlogLevel(level));
  logger->flush_on(spdlog::level::trace);
  return logger;
}

void configureLogging(LogLevel level, LogFormat format) {
  spdlog::set_default_logger(
      makeLogger("", level, format, std::make_shared<spdlog::sinks::stderr_sink_mt>()));
}

void logEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
              std::initializer_list<LogField> fields) {
  emitEvent(logger, level, msg, {}, {fields.begin(), fields.size()});
}

void logEvent(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  emitEvent(*spdlog::default_logger_raw(), level, msg, {}, {fields.begin(), fields.size()});
}

void logEvent(LogLevel level, std::string_view msg, std::span<const LogField> fields) {
  emitEvent(*spdlog::default_logger_raw(), level, msg, {}, fields);
}

}  // namespace shardscaler::base
