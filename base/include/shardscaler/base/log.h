// The process's one structured log: one event per line on stderr, as text or JSON, with
// key=value fields apart from the message. Must never split an event over two lines, write JSON
// that does not parse, nor drop a field.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <spdlog/common.h>
#include <spdlog/formatter.h>
#include <spdlog/logger.h>

#include "shardscaler/base/expected.h"
#include "shardscaler/base/log_field.h"

namespace shardscaler::base {

enum class LogLevel { Debug, Info, Warn, Error };
enum class LogFormat { Text, Json };

// "debug", "info", "warn" (or "warning"), "error"; the error names the accepted values.
Expected<LogLevel> parseLogLevel(std::string_view text);
// "text" or "json".
Expected<LogFormat> parseLogFormat(std::string_view text);
std::string_view toString(LogLevel level);
std::string_view toString(LogFormat format);
spdlog::level::level_enum toSpdlogLevel(LogLevel level);

// The line layout for `format`: text is "<ts> <LEVEL> <msg> k=v ...", JSON is
// {"ts":..,"level":..,"msg":..,"k":"v"}. Fields reach the formatter only through
// logEvent/LogContext on a logger made by makeLogger; plain spdlog calls log their message
// without fields.
std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format);

// A synchronous logger writing to `sink` with the layout and level given.
std::shared_ptr<spdlog::logger> makeLogger(std::string name, LogLevel level, LogFormat format,
                                           spdlog::sink_ptr sink);

// Replaces spdlog's default logger by one of makeLogger's writing to stderr; every event and
// every spdlog::info(...) in the process then follows the chosen layout and level.
void configureLogging(LogLevel level, LogFormat format);

// Logs through spdlog's default logger (or `logger`) with fields. On a logger not made by
// makeLogger (a process that never called configureLogging) the fields are appended to the
// message as "k=v" text, so they are never lost.
void logEvent(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
void logEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
              std::initializer_list<LogField> fields = {});
// The same with fields gathered at run time.
void logEvent(LogLevel level, std::string_view msg, std::span<const LogField> fields);

}  // namespace shardscaler::base
