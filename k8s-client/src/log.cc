#include "shardscaler/k8s_client/log.h"

#include <charconv>
#include <cmath>
#include <memory>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

namespace shardscaler::k8s {
namespace {

std::mutex sink_mutex;
std::shared_ptr<const LogSink> installed_sink;  // null: defaultSink

// logfmt: a value is bare when it is one plain token, else quoted with " and \ escaped; a line
// break inside a value would split the event, so it is escaped too.
void appendValue(std::string& out, std::string_view v) {
  const bool bare = !v.empty() && v.find_first_of(" =\"\\\n\r\t") == std::string_view::npos;
  if (bare) {
    out += v;
    return;
  }
  out += '"';
  for (const char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  out += '"';
}

void defaultSink(LogLevel level, std::string_view msg, std::span<const LogField> fields) {
  const auto spd_level = toSpdlogLevel(level);
  if (!spdlog::default_logger_raw()->should_log(spd_level)) return;
  std::string line(msg);
  for (const LogField& f : fields) {
    line += ' ';
    line += f.key();
    line += '=';
    appendValue(line, f.value());
  }
  spdlog::default_logger_raw()->log(spd_level, line);
}

}  // namespace

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

LogField::LogField(std::string_view key, double value) : key_(key) {
  if (std::isfinite(value)) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    value_.assign(buf, ec == std::errc() ? end : buf);
    raw_ = true;
  } else {
    value_ = std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf");
  }
}

void setLogSink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  std::lock_guard lock(sink_mutex);
  installed_sink = std::move(next);
}

void log(LogLevel level, std::string_view msg, std::span<const LogField> fields) {
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard lock(sink_mutex);
    sink = installed_sink;
  }
  if (sink) {
    (*sink)(level, msg, fields);
  } else {
    defaultSink(level, msg, fields);
  }
}

void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  log(level, msg, std::span<const LogField>(fields.begin(), fields.size()));
}

}  // namespace shardscaler::k8s
