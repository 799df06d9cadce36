#include "shardscaler/telemetry/logging.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <span>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

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

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void appendHexEscape(spdlog::memory_buf_t& out, unsigned char c, bool json) {
  static constexpr char kHex[] = "0123456789abcdef";
  append(out, json ? "\\u00" : "\\x");
  out.push_back(kHex[c >> 4]);
  out.push_back(kHex[c & 0xF]);
}

// Escapes control characters, quotes and backslashes; invalid UTF-8 becomes U+FFFD so the line
// stays valid JSON (and readable text) whatever bytes a server sent us.
void appendEscaped(spdlog::memory_buf_t& out, std::string_view s, bool json, bool escape_quotes) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = utf8SequenceLength(s, i);
    if (len == 0) {
      append(out, "\xEF\xBF\xBD");
      ++i;
      continue;
    }
    if (len > 1) {
      append(out, s.substr(i, len));
      i += len;
      continue;
    }
    switch (c) {
      case '\n':
        append(out, "\\n");
        break;
      case '\r':
        append(out, "\\r");
        break;
      case '\t':
        append(out, "\\t");
        break;
      case '"':
        if (escape_quotes) {
          append(out, "\\\"");
        } else {
          out.push_back('"');
        }
        break;
      case '\\':
        if (escape_quotes) {
          append(out, "\\\\");
        } else {
          out.push_back('\\');
        }
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          appendHexEscape(out, c, json);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
}

void appendJsonString(spdlog::memory_buf_t& out, std::string_view s) {
  out.push_back('"');
  appendEscaped(out, s, /*json=*/true, /*escape_quotes=*/true);
  out.push_back('"');
}

// logfmt quoting: bare when the value is one plain token, else a quoted Go-style string.
void appendTextValue(spdlog::memory_buf_t& out, std::string_view v) {
  bool bare = !v.empty();
  for (const char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7F || c >= 0x80) {
      bare = false;
      break;
    }
  }
  if (bare) {
    append(out, v);
    return;
  }
  out.push_back('"');
  appendEscaped(out, v, /*json=*/false, /*escape_quotes=*/true);
  out.push_back('"');
}

void appendTimestamp(spdlog::memory_buf_t& out, spdlog::log_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs);
  const std::time_t tt = secs.count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                              tm.tm_sec, static_cast<int>(millis.count()));
  out.append(buf, buf + n);
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

class TextFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    appendTimestamp(dest, msg.time);
    dest.push_back(' ');
    std::string level(levelName(msg.level));
    for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    level.resize(std::max<size_t>(level.size(), 5), ' ');
    append(dest, level);
    dest.push_back(' ');
    appendEscaped(dest, {msg.payload.data(), msg.payload.size()}, /*json=*/false,
                  /*escape_quotes=*/false);
    forEachPendingField([&](const LogField& f) {
      dest.push_back(' ');
      append(dest, f.key());
      dest.push_back('=');
      appendTextValue(dest, f.value());
    });
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<TextFormatter>();
  }
};

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    append(dest, "{\"ts\":\"");
    appendTimestamp(dest, msg.time);
    append(dest, "\",\"level\":\"");
    append(dest, levelName(msg.level));
    append(dest, "\",");
    if (msg.logger_name.size() > 0) {
      append(dest, "\"logger\":");
      appendJsonString(dest, {msg.logger_name.data(), msg.logger_name.size()});
      dest.push_back(',');
    }
    append(dest, "\"msg\":");
    appendJsonString(dest, {msg.payload.data(), msg.payload.size()});
    forEachPendingField([&](const LogField& f) {
      dest.push_back(',');
      // A field may not shadow the fixed members a log pipeline keys on.
      const std::string& key = f.key();
      if (key == "ts" || key == "level" || key == "msg" || key == "logger") {
        appendJsonString(dest, "field_" + key);
      } else {
        appendJsonString(dest, key);
      }
      dest.push_back(':');
      if (f.raw()) {
        append(dest, f.value());
      } else {
        appendJsonString(dest, f.value());
      }
    });
    append(dest, "}\n");
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

LogField::LogField(std::string_view key, double value) : key_(key) {
  if (std::isfinite(value)) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    value_.assign(buf, ec == std::errc() ? end : buf);
    raw_ = true;
  } else {
    // JSON has no NaN or infinities; keep Prometheus' spelling as a string.
    value_ = std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf");
  }
}

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

std::unique_ptr<spdlog::formatter> makeLogFormatter(LogFormat format) {
  if (format == LogFormat::Json) return std::make_unique<JsonFormatter>();
  return std::make_unique<TextFormatter>();
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
