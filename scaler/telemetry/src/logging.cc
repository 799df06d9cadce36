#include "shardscaler/telemetry/logging.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <span>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace shardscaler::telemetry {
namespace {

// The fields of the event being logged on this thread. spdlog's synchronous loggers format in
// the caller's thread, inside logger.log(), so the formatter sees exactly this event's fields;
// plain spdlog calls find the spans empty.
struct PendingFields {
  std::span<const LogField> context;
  std::span<const LogField> call;
};
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

void append(spdlog::memory_buf_t& out, std::string_view s) {
  out.append(s.data(), s.data() + s.size());
}

// A JSON string literal, escaped by nlohmann; invalid UTF-8 becomes U+FFFD, so the line stays
// valid JSON (and readable text) whatever bytes a server sent us.
std::string jsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// logfmt quoting: bare when the value is one plain token, else a quoted, escaped string.
void appendTextValue(spdlog::memory_buf_t& out, std::string_view v) {
  const bool bare = !v.empty() && std::ranges::none_of(v, [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c <= ' ' || c == '=' || c == '"' || c == '\\' || c >= 0x7F;
  });
  append(out, bare ? std::string(v) : jsonString(v));
}

// A text message keeps its quotes and backslashes as they are (it is read, not parsed), but a
// control character is escaped so one event stays one line.
void appendTextMessage(spdlog::memory_buf_t& out, std::string_view msg) {
  const std::string quoted = jsonString(msg);
  const std::string_view body(quoted.data() + 1, quoted.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size() && (body[i + 1] == '"' || body[i + 1] == '\\')) {
      ++i;
    }
    out.push_back(body[i]);
  }
}

std::string_view levelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

template <typename Fn>
void forEachPendingField(Fn&& fn) {
  for (const LogField& f : pending_fields.context) fn(f);
  for (const LogField& f : pending_fields.call) fn(f);
}

// The parts of a line spdlog's pattern language has no flag for, as custom flags of a
// pattern_formatter: the level as this log names it, the escaped message, the fields.
class LevelFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit LevelFlag(LogFormat format) : format_(format) {}
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    std::string level(levelName(msg.level));
    if (format_ == LogFormat::Text) {  // "INFO ", "ERROR": upper case, five wide
      for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      level.resize(std::max<size_t>(level.size(), 5), ' ');
    }
    append(dest, level);
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<LevelFlag>(format_);
  }

 private:
  LogFormat format_;
};

class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit MessageFlag(LogFormat format) : format_(format) {}
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    if (format_ == LogFormat::Text) {
      appendTextMessage(dest, payload);
      return;
    }
    if (msg.logger_name.size() > 0) {
      append(dest, ",\"logger\":");
      append(dest, jsonString({msg.logger_name.data(), msg.logger_name.size()}));
    }
    append(dest, ",\"msg\":");
    append(dest, jsonString(payload));
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<MessageFlag>(format_);
  }

 private:
  LogFormat format_;
};

class FieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit FieldsFlag(LogFormat format) : format_(format) {}
  void format(const spdlog::details::log_msg& /*msg*/, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    forEachPendingField([&](const LogField& f) {
      if (format_ == LogFormat::Text) {
        dest.push_back(' ');
        append(dest, f.key());
        dest.push_back('=');
        appendTextValue(dest, f.value());
        return;
      }
      dest.push_back(',');
      // A field may not shadow the fixed members a log pipeline keys on.
      const std::string& key = f.key();
      const bool fixed = key == "ts" || key == "level" || key == "msg" || key == "logger";
      append(dest, jsonString(fixed ? "field_" + key : key));
      dest.push_back(':');
      append(dest, f.raw() ? f.value() : jsonString(f.value()));
    });
  }
  std::unique_ptr<spdlog::custom_flag_formatter> clone() const override {
    return std::make_unique<FieldsFlag>(format_);
  }

 private:
  LogFormat format_;
};

}  // namespace

std::expected<LogLevel, std::string> parseLogLevel(std::string_view text) {
  if (text == "debug") return LogLevel::Debug;
  if (text == "info") return LogLevel::Info;
  if (text == "warn" || text == "warning") return LogLevel::Warn;
  if (text == "error") return LogLevel::Error;
  return std::unexpected("\"" + std::string(text) + "\" is not one of debug, info, warn, error");
}

std::expected<LogFormat, std::string> parseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::Text;
  if (text == "json") return LogFormat::Json;
  return std::unexpected("\"" + std::string(text) + "\" is not one of text, json");
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

std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format) {
  // Time in UTC with milliseconds, RFC 3339; %& level, %? message, %* fields (custom flags).
  constexpr const char* kText = "%Y-%m-%dT%H:%M:%S.%eZ %& %?%*";
  constexpr const char* kJson = R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%&"%?%*})";
  auto formatter =
      std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc, "\n");
  formatter->add_flag<LevelFlag>('&', format)
      .add_flag<MessageFlag>('?', format)
      .add_flag<FieldsFlag>('*', format)
      .set_pattern(format == LogFormat::Json ? kJson : kText);
  return formatter;
}

std::shared_ptr<spdlog::logger> makeLogger(std::string name, LogLevel level, LogFormat format,
                                           spdlog::sink_ptr sink) {
  sink->set_formatter(makeLogFormatter(format));
  auto logger = std::make_shared<spdlog::logger>(std::move(name), std::move(sink));
  logger->set_level(toSpdlogLevel(level));
  logger->flush_on(spdlog::level::trace);
  return logger;
}

void configureLogging(LogLevel level, LogFormat format) {
  spdlog::set_default_logger(
      makeLogger("", level, format, std::make_shared<spdlog::sinks::stderr_sink_mt>()));
  // k8s-client's events (leader election, watches) carry the same fields: logged as fields.
  k8s::setLogSink([](LogLevel event_level, std::string_view msg, std::span<const LogField> fields) {
    logEvent(event_level, msg, fields);
  });
}

void logEvent(spdlog::logger& logger, LogLevel level, std::string_view msg,
              std::initializer_list<LogField> fields) {
  const auto spd_level = toSpdlogLevel(level);
  if (!logger.should_log(spd_level)) return;
  FieldsScope scope({}, {fields.begin(), fields.size()});
  logger.log(spd_level, spdlog::string_view_t(msg.data(), msg.size()));
}

void logEvent(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  logEvent(*spdlog::default_logger_raw(), level, msg, fields);
}

void logEvent(LogLevel level, std::string_view msg, std::span<const LogField> fields) {
  spdlog::logger& logger = *spdlog::default_logger_raw();
  const auto spd_level = toSpdlogLevel(level);
  if (!logger.should_log(spd_level)) return;
  FieldsScope scope({}, fields);
  logger.log(spd_level, spdlog::string_view_t(msg.data(), msg.size()));
}

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
  const auto spd_level = toSpdlogLevel(level);
  if (!logger.should_log(spd_level)) return;
  FieldsScope scope(fields_, {fields.begin(), fields.size()});
  logger.log(spd_level, spdlog::string_view_t(msg.data(), msg.size()));
}

}  // namespace shardscaler::telemetry
