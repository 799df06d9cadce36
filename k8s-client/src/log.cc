#include "shardscaler/k8s_client/log.h"

#include <memory>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

namespace shardscaler::k8s {
namespace {

std::mutex sink_mutex;
std::shared_ptr<const LogSink> installed_sink;  // null: defaultSink

spdlog::level::level_enum toSpdlog(LogLevel level) {
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
  const auto spd_level = toSpdlog(level);
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

void setLogSink(LogSink sink) {
  auto next = sink ? std::make_shared<const LogSink>(std::move(sink)) : nullptr;
  std::lock_guard lock(sink_mutex);
  installed_sink = std::move(next);
}

void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  std::shared_ptr<const LogSink> sink;
  {
    std::lock_guard lock(sink_mutex);
    sink = installed_sink;
  }
  const std::span<const LogField> view(fields.begin(), fields.size());
  if (sink) {
    (*sink)(level, msg, view);
  } else {
    defaultSink(level, msg, view);
  }
}

}  // namespace shardscaler::k8s
