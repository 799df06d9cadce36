// Structured logs for the service: one event per line on stderr, as text or JSON, with key=value
// fields. Must never split an event over two lines nor write JSON that does not parse.
#pragma once

#include <expected>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/common.h>
#include <spdlog/formatter.h>
#include <spdlog/logger.h>

#include "shardscaler/k8s_client/log.h"

namespace shardscaler::telemetry {

// The event shape is k8s-client's (the lowest component), so the client's own events pass
// into this log unchanged: one LogField, one LogLevel in the process.
using k8s::LogField;
using k8s::LogLevel;
using k8s::toSpdlogLevel;

enum class LogFormat { Text, Json };

// "debug", "info", "warn" (or "warning"), "error"; the error names the accepted values.
std::expected<LogLevel, std::string> parseLogLevel(std::string_view text);
// "text" or "json".
std::expected<LogFormat, std::string> parseLogFormat(std::string_view text);
std::string_view toString(LogLevel level);
std::string_view toString(LogFormat format);

// The line layout for `format`: text is "<ts> <LEVEL> <msg> k=v ...", JSON is
// {"ts":..,"level":..,"msg":..,"k":"v"}. Fields reach the formatter only through
// logEvent/LogContext on a synchronous logger; plain spdlog calls log their message without fields.
std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format);

// A synchronous logger writing to `sink` with the layout and level given.
std::shared_ptr<spdlog::logger> makeLogger(std::string name, LogLevel level, LogFormat format,
                                           spdlog::sink_ptr sink);

// Replaces spdlog's default logger by one writing to stderr, and routes k8s-client's events
// into it; every spdlog::info(...) in the process then follows the chosen layout and level.
void configureLogging(LogLevel level, LogFormat format);

// Logs through spdlog's default logger (or `logger`) with fields.
void logEvent(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
void logEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
              std::initializer_list<LogField> fields = {});
// The same with fields gathered at run time (e.g. forwarded from k8s-client's log sink).
void logEvent(LogLevel level, std::string_view msg, std::span<const LogField> fields);

// Fields shared by every event of one unit of work, e.g. {"key", "ns/name"}, {"reconcile_id", 7}.
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

}  // namespace shardscaler::telemetry
